"""KServe 0.21: ``kserve.ModelServer`` with one ``kserve.Model`` per PeerModel (kserve_main.py)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from bench_serving import Server, running

from . import setup_peers
from .models import PeerModel, write_specs

HERE = Path(__file__).resolve().parent


def write_repository(models: Sequence[PeerModel], root: Path, cache: Path) -> Path:
    """KServe has no repository format: its models are classes; this writes their specs."""
    return write_specs(list(models), root / "kserve_models.json")


def start(
    repository: Path, grpc_port: int, http_port: int, metrics_port: int, log: Path, cache: Path
) -> AbstractContextManager[Server]:
    # KServe serves metrics on its REST port: metrics_port goes unused.
    command = [
        str(setup_peers.python_of("kserve", cache)),
        str(HERE / "kserve_main.py"),
        f"--peer-specs={repository}",
        f"--grpc_port={grpc_port}",
        f"--http_port={http_port}",
        # Its per-request latency line would be one more logger on the request path.
        "--enable_latency_logging=false",
    ]
    return running("kserve", command, grpc_port, log)
