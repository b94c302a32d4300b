"""One real ovmsx server per test module (gRPC and REST), serving a model with a static
shape, one with a dynamic shape, an integer model, a string model, a pipeline and a Python
graph (tests/rest/rest_servables.py builds them). It must never log a traceback for a client's
error, and must stop on SIGTERM with exit code 0."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "serving"), str(TESTS / "rest")]

from rest_process import CRASH_SIGNS, RestProcess, rest_served  # noqa: E402
from rest_servables import write_servables  # noqa: E402

GIB = 1 << 30


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestProcess]:
    root = tmp_path_factory.mktemp("malformed")
    args = ["--config_path", str(write_servables(root))]
    with rest_served(args, root, (*CRASH_SIGNS, "Traceback")) as process:
        yield process


@pytest.fixture(scope="module")
def channel(server: RestProcess) -> Iterator[grpc.Channel]:
    options = [("grpc.max_send_message_length", GIB), ("grpc.max_receive_message_length", GIB)]
    with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=options) as opened:
        yield opened
