"""The pull tests download from a Hugging Face-compatible hub served by the test process on a
loopback port (pull_fake_hub.py), with real HTTP through huggingface_hub: ``HF_ENDPOINT``
points at it, and ``HF_TOKEN`` and ``OVMS_MODEL_REPOSITORY_PATH`` are cleared for each test.
"""

from __future__ import annotations

import io
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovmsx.config.errors import EX_USAGE, UsageError
from ovmsx.pull import parse_other_mode, run_other_mode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pull_fake_hub import FakeHub
from pull_outcomes import LLM_CONFIG, Outcome, Run


def _ir(folder: Path, size: int) -> dict[str, bytes]:
    """An OpenVINO IR made with openvino's API, ``y = x + c`` with ``size`` floats in ``c``."""
    x = ops.parameter([1, size], ov.Type.f32, name="x")
    constant = ops.constant(np.arange(size, dtype=np.float32).reshape(1, size))
    model = ov.Model([ops.add(x, constant)], [x], "tiny")
    ov.save_model(model, folder / "openvino_model.xml", compress_to_fp16=False)
    return {
        "openvino_model.xml": (folder / "openvino_model.xml").read_bytes(),
        "openvino_model.bin": (folder / "openvino_model.bin").read_bytes(),
    }


@pytest.fixture(scope="session")
def ir_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A tiny OpenVINO IR (a 256 KiB ``.bin``)."""
    return _ir(tmp_path_factory.mktemp("ir"), 65536)


@pytest.fixture(scope="session")
def big_ir_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """An IR whose ``.bin`` (12 MiB) is larger than the 10 MiB chunks huggingface_hub writes
    a download in: a transfer cut past the first chunk resumes after it."""
    return _ir(tmp_path_factory.mktemp("big_ir"), 3 * 1024 * 1024)


@pytest.fixture
def llm_files(ir_files: dict[str, bytes]) -> dict[str, bytes]:
    """An OpenVINO-format repository as on the hub: the IR, config.json, and the usual extras."""
    return {
        **ir_files,
        "config.json": LLM_CONFIG,
        "generation_config.json": b'{"max_new_tokens": 8}',
        "README.md": b"# tiny\n",
        ".gitattributes": b"*.bin filter=lfs diff=lfs merge=lfs -text\n",
    }


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    server = FakeHub().start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("OVMS_MODEL_REPOSITORY_PATH", raising=False)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def ovmsx_mode() -> Run:
    """Run an ``ovms`` command line of the pull or config modes in this process, as the CLI
    would: parse it, run it; its exit code and what it printed."""

    def run(*argv: str | Path) -> Outcome:
        out, err = io.StringIO(), io.StringIO()
        try:
            mode = parse_other_mode([str(arg) for arg in argv])
        except UsageError as error:
            return Outcome(EX_USAGE, "", f"ovmsx: {error}\n")
        assert mode is not None, "not a pull or config-management command line"
        code = run_other_mode(mode, out=out, err=err)
        return Outcome(code, out.getvalue(), err.getvalue())

    return run
