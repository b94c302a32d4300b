"""Process-wide compile defaults (``--grpc_workers`` gives each process its share of the cores):
they reach OpenVINO, a model's own ``plugin_config`` wins, and other devices are left alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

from ovmsx import _core
from ovmsx.config import ModelConfig
from ovmsx.servables import compile_defaults
from ovmsx.servables.model_loader import compile_version
from ovmsx.server import set_cpu_defaults

THREADS = "INFERENCE_NUM_THREADS"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    x = ops.parameter([1, 4], ov.Type.f32, name="x")
    model = ov.Model([ops.add(x, ops.constant(np.float32(1)))], [x], "plus_one")
    ov.save_model(model, tmp_path / "1" / "model.xml")
    return tmp_path / "1"


@pytest.fixture
def one_thread() -> Iterator[None]:
    compile_defaults.set_defaults("CPU", {THREADS: "1"})
    yield
    compile_defaults.set_defaults("CPU", {})


def _compiled_property(folder: Path, key: str, **settings) -> str:
    """Property ``key`` of the model in ``folder`` compiled as the server compiles it."""
    config = ModelConfig(name="m", base_path=str(folder.parent), **settings)
    version = compile_version(config, 1, folder, _core.CompletionQueue(), None)
    try:
        return version.compiled.get_property(key)
    finally:
        version.pool.close()


def _threads(folder: Path, **settings) -> str:
    return _compiled_property(folder, THREADS, **settings)


def test_defaults_reach_the_compiled_model(folder: Path, one_thread: None) -> None:
    assert _threads(folder) == "1"


def test_plugin_config_wins_over_the_defaults(folder: Path, one_thread: None) -> None:
    assert _threads(folder, plugin_config={THREADS: 2}) == "2"
    # OVMS's old name for the same property is renamed first, and wins too.
    assert _threads(folder, plugin_config={"CPU_THREADS_NUM": 2}) == "2"


def test_defaults_belong_to_the_device_named(one_thread: None) -> None:
    assert compile_defaults.defaults_for("CPU") == {THREADS: "1"}
    assert compile_defaults.defaults_for("AUTO") == {}
    assert compile_defaults.defaults_for("GPU") == {}


@pytest.fixture
def server_defaults() -> Iterator[None]:
    set_cpu_defaults(workers=1)
    yield
    compile_defaults.set_defaults("CPU", {})


def _pinning(folder: Path, **settings) -> str:
    return _compiled_property(folder, "ENABLE_CPU_PINNING", **settings)


def test_the_server_compiles_without_cpu_pinning_unless_asked(
    folder: Path, server_defaults: None
) -> None:
    """Quick models infer on the gRPC polling thread, which pinning would tie to one core."""
    assert _pinning(folder) == "NO"
    assert _pinning(folder, plugin_config={"ENABLE_CPU_PINNING": True}) == "YES"
