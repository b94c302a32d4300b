"""Triton Inference Server 2.51 (the binary inside the nvidia-pytriton wheel), Python backend.

``write_repository`` lays out one Python-backend model per ``PeerModel`` (config.pbtxt,
model.py = triton_model.py, spec.json); ``start`` runs tritonserver on it, bound to 127.0.0.1,
with the environment its Python stub needs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from bench_serving import Server, running

from . import setup_peers
from .models import PeerModel, spec_json

HERE = Path(__file__).resolve().parent
CONFIG = """name: "{name}"
backend: "python"
max_batch_size: 0
input [{{ name: "{input}" data_type: TYPE_{datatype} dims: [{input_dims}] }}]
output [{{ name: "{output}" data_type: TYPE_{datatype} dims: [{output_dims}] }}]
instance_group [{{ kind: KIND_CPU count: 1 }}]
"""


def _wheel(cache: Path) -> Path:
    return setup_peers.site_packages("triton", cache) / "pytriton"


def write_repository(models: Sequence[PeerModel], root: Path, cache: Path) -> Path:
    repository = root / "triton_repository"
    python_path = [str(setup_peers.site_packages("triton", cache)), str(HERE)]
    for model in models:
        version = repository / model.name / "1"
        version.mkdir(parents=True)
        (repository / model.name / "config.pbtxt").write_text(
            CONFIG.format(
                name=model.name,
                input=model.input.name,
                output=model.output,
                datatype=model.input.datatype,
                input_dims=",".join(map(str, model.input.shape)),
                # Every output here has its input's rank; its sizes are the model's business
                # (the CNN's output is 1x1x640x640), so -1 accepts each.
                output_dims=",".join("-1" for _ in model.input.shape),
            )
        )
        shutil.copyfile(HERE / "triton_model.py", version / "model.py")
        spec = {**spec_json(model), "python_path": python_path}
        (version / "spec.json").write_text(json.dumps(spec, indent=2) + "\n")
    return repository


def _backends(root: Path, cache: Path) -> Path:
    """The wheel ships only the Python backend, in two places: gather its three files."""
    wheel = _wheel(cache)
    python = root / "triton_backends" / "python"
    python.mkdir(parents=True, exist_ok=True)
    for source in (
        wheel / "tritonserver/backends/python/libtriton_python.so",
        wheel / "tritonserver/backends/python/triton_python_backend_utils.py",
        wheel / "tritonserver/python_backend_stubs/3.11/triton_python_backend_stub",
    ):
        shutil.copy2(source, python / source.name)
    return python.parent


def start(
    repository: Path, grpc_port: int, http_port: int, metrics_port: int, log: Path, cache: Path
) -> AbstractContextManager[Server]:
    venv = setup_peers.venv_dir("triton", cache)
    site = setup_peers.site_packages("triton", cache)
    # The stub must load the libpython the venv was made from, or it fails on start-up
    # (RLock._recursion_count); the wheel's vendored libraries sit in nvidia_pytriton.libs.
    libdir = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import sysconfig; print(sysconfig.get_config_var('LIBDIR'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # With the venv's python first on PATH the stub's interpreter takes the venv's site-packages
    # (checked: its numpy is the venv's).
    environment = [
        f"LD_LIBRARY_PATH={libdir}:{site / 'nvidia_pytriton.libs'}",
        f"PATH={venv / 'bin'}:/usr/bin:/bin",
    ]
    # `env` execs tritonserver in place: the process started is the server, whose process tree
    # (with the stubs) bench_peers.py reads memory from.
    command = [
        "env",
        *environment,
        str(_wheel(cache) / "tritonserver/bin/tritonserver"),
        f"--model-repository={repository}",
        f"--backend-directory={_backends(repository.parent, cache)}",
        "--grpc-address=127.0.0.1",
        f"--grpc-port={grpc_port}",
        "--http-address=127.0.0.1",
        f"--http-port={http_port}",
        "--metrics-address=127.0.0.1",
        f"--metrics-port={metrics_port}",
        "--allow-gpu-metrics=false",
    ]
    return running("triton", command, grpc_port, log)
