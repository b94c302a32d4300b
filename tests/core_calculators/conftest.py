"""The served core-calculator tests start a real server with the serving tests' helpers
(``serving_process``, ``graph_streams``), which live beside those tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from core_served_graphs import write_graphs

_TESTS = Path(__file__).resolve().parents[1]
if str(_TESTS / "serving") not in sys.path:
    sys.path.insert(0, str(_TESTS / "serving"))

import tritonclient.grpc as grpcclient  # noqa: E402
from serving_process import ServerProcess, served  # noqa: E402


@pytest.fixture(scope="module")
def graphs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("core_graphs")


@pytest.fixture(scope="module")
def server(graphs_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for every graph of core_served_graphs.py, on gRPC and REST."""
    config = write_graphs(graphs_root)
    with served(config, tmp_path_factory.mktemp("core_srv"), rest=True) as process:
        yield process


@pytest.fixture(scope="module")
def client(server: ServerProcess) -> Iterator[grpcclient.InferenceServerClient]:
    with grpcclient.InferenceServerClient(server.url) as triton:
        yield triton
