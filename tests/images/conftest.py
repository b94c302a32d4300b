"""The encoded-image tests share one real server (gRPC and REST) serving the image models and
pipelines of ``image_servables``; the serving and REST tests' helpers start it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "serving"))
sys.path.insert(0, str(TESTS / "rest"))

import tritonclient.grpc as grpcclient  # noqa: E402
import tritonclient.http as httpclient  # noqa: E402
from image_servables import write_servables  # noqa: E402
from rest_process import RestProcess, rest_served  # noqa: E402


@pytest.fixture(scope="session")
def image_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestProcess]:
    """One server for every image test; at the end it must stop on SIGTERM with exit code 0."""
    config = write_servables(tmp_path_factory.mktemp("image_servables"))
    with rest_served(["--config_path", str(config)], tmp_path_factory.mktemp("images")) as process:
        yield process


@pytest.fixture(scope="session")
def grpc_client(image_server: RestProcess) -> Iterator[grpcclient.InferenceServerClient]:
    with grpcclient.InferenceServerClient(f"127.0.0.1:{image_server.port}") as client:
        yield client


@pytest.fixture(scope="session")
def http_client(image_server: RestProcess) -> Iterator[httpclient.InferenceServerClient]:
    client = httpclient.InferenceServerClient(image_server.url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder for the test's image files."""
    return tmp_path
