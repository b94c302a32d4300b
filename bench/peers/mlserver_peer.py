"""MLServer 1.7.1: ``mlserver start`` on a folder of model-settings.json files, all served in
the server's own process by mlserver_runtime.PeerRuntime."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from bench_serving import Server, running

from . import setup_peers
from .models import PeerModel, spec_json

HERE = Path(__file__).resolve().parent


def write_repository(models: Sequence[PeerModel], root: Path, cache: Path) -> Path:
    repository = root / "mlserver_repository"
    for model in models:
        folder = repository / model.name
        folder.mkdir(parents=True)
        spec = spec_json(model)
        settings = {
            "name": model.name,
            "implementation": "mlserver_runtime.PeerRuntime",
            "inputs": [
                {"name": spec["input"], "datatype": spec["datatype"], "shape": spec["shape"]}
            ],
            # Every output here has its input's rank; -1 leaves its sizes to the model.
            "outputs": [
                {
                    "name": spec["output"],
                    "datatype": spec["datatype"],
                    "shape": [-1] * len(spec["shape"]),
                }
            ],
            "parameters": {"extra": spec},
        }
        (folder / "model-settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    return repository


def _write_settings(repository: Path, grpc_port: int, http_port: int, metrics_port: int) -> None:
    settings = {
        "host": "127.0.0.1",  # MLServer binds gRPC, REST and metrics to this one host
        "grpc_port": grpc_port,
        "http_port": http_port,
        "metrics_port": metrics_port,
        # gRPC's 4 MB default refuses the CNN's 4.9 MB request; 1 GiB as OVMS and KServe allow.
        "grpc_max_message_length": 1 << 30,
        # Inference in the server's own process, like the other servers; MLServer's
        # default would hand every request to worker processes.
        "parallel_workers": 0,
        # Its default (true) logs at DEBUG level and writes a REST access log.
        "debug": False,
    }
    (repository / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")


def start(
    repository: Path, grpc_port: int, http_port: int, metrics_port: int, log: Path, cache: Path
) -> AbstractContextManager[Server]:
    _write_settings(repository, grpc_port, http_port, metrics_port)
    venv = setup_peers.venv_dir("mlserver", cache)
    command = [
        "env",
        f"PYTHONPATH={HERE}",  # where mlserver_runtime and peer_compute live
        str(venv / "bin" / "mlserver"),
        "start",
        str(repository),
    ]
    return running("mlserver", command, grpc_port, log)
