"""The security tests start real servers with the serving and REST tests' helpers
(``serving_process``, ``rest_process``, ``serving_models``, ``serving_graphs``), which live
beside those tests; ``security_servables`` builds what they serve.

``guarded`` is one server (gRPC and REST) with a small memory quota, shared by the tests that
only send requests; tests about binding start servers of their own.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serving"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rest"))

from quota_clients import QUOTA
from rest_process import RestProcess, rest_served
from security_servables import write_servables


@pytest.fixture(scope="session")
def servables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``config.json`` of the model ``copy`` and the graph ``gate``."""
    return write_servables(tmp_path_factory.mktemp("security_servables"))


@pytest.fixture(scope="session")
def guarded(servables: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestProcess]:
    """A server with ``--grpc_memory_quota`` QUOTA; it must stop on SIGTERM with exit code 0."""
    args = ["--config_path", str(servables), "--grpc_memory_quota", str(QUOTA)]
    with rest_served(args, tmp_path_factory.mktemp("guarded")) as process:
        yield process


@pytest.fixture
def gate_folder(servables: Path) -> Path:
    """The ``gate`` graph's folder, where its node looks for ``open``."""
    return servables.parent / "gate"
