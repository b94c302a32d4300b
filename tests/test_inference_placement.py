"""Which inferences block the thread that has the request (``CompiledVersion.runs_here``):
quick models, measured blocking; models whose submitted round trip is short get probed
blocking first; slow models and busy pools are always submitted to OpenVINO's thread."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovmsx import Tensor
from ovmsx.call_timer import WARM_UP_CALLS
from ovmsx.config.model_config import ModelConfig
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.model_loader import CompiledVersion, compile_version

HEAVY_ROWS = 16384  # rows that keep the heavy model busy for well over 5 ms
LONG_ROWS = 1 << 20  # rows that keep add_one busy for milliseconds


def _save(tmp_path_factory, name: str, model: ov.Model) -> Path:
    base = tmp_path_factory.mktemp(name)
    (base / "1").mkdir()
    ov.save_model(model, base / "1" / "model.xml")
    return base


@pytest.fixture(scope="module")
def add_one(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = ops.parameter([1, 10], ov.Type.f32, name="input")
    y = ops.add(x, ops.constant(np.float32(1)))
    y.output(0).set_names({"output"})
    return _save(tmp_path_factory, "add_one", ov.Model([y], [x], "add_one"))


@pytest.fixture(scope="module")
def any_batch_add_one(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = ops.parameter([-1, 10], ov.Type.f32, name="input")
    y = ops.add(x, ops.constant(np.float32(1)))
    y.output(0).set_names({"output"})
    return _save(tmp_path_factory, "any_batch_add_one", ov.Model([y], [x], "add_one"))


@pytest.fixture(scope="module")
def heavy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = ops.parameter([HEAVY_ROWS, 256], ov.Type.f32, name="input")
    y = x
    for _ in range(8):  # relu between the products, so OpenVINO cannot fold them into one
        y = ops.matmul(y, ops.constant(np.full((256, 256), 1 / 256, np.float32)), False, False)
        y = ops.relu(y)
    y.output(0).set_names({"output"})
    return _save(tmp_path_factory, "heavy", ov.Model([y], [x], "heavy"))


async def _submitted(compiled: CompiledVersion, dispatcher: InferenceDispatcher, data, count):
    for _ in range(count):
        await dispatcher.infer(compiled.pool, [data])
    await _idle(compiled.pool)


async def _idle(pool) -> None:
    """Until every infer request is back: a result can arrive just before its request is, and a
    blocking call made then waits for that request and runs on OpenVINO's thread."""
    while pool.active:
        await asyncio.sleep(0.001)


def _placements(base: Path, shape: tuple[int, ...], nireq: int = 1) -> list[bool]:
    """``runs_here()`` fresh, after warm-up inferences submitted, after as many blocking."""

    async def run() -> list[bool]:
        dispatcher = InferenceDispatcher(asyncio.get_running_loop())
        config = ModelConfig.model_validate({"name": "m", "base_path": str(base), "nireq": nireq})
        compiled = compile_version(config, 1, base / "1", dispatcher.queue, None)
        data = Tensor("input", np.ones(shape, np.float32))
        try:
            seen = [compiled.runs_here()]
            await _submitted(compiled, dispatcher, data, WARM_UP_CALLS)
            seen.append(compiled.runs_here())
            for _ in range(WARM_UP_CALLS):
                compiled.pool.infer([data])
            seen.append(compiled.runs_here())
            return seen
        finally:
            dispatcher.close()
            compiled.pool.close()

    return asyncio.run(run())


def test_a_quick_model_is_probed_after_its_round_trips_then_runs_where_it_is_asked(
    add_one: Path,
) -> None:
    assert _placements(add_one, (1, 10)) == [False, True, True]


def test_a_slow_model_is_never_run_blocking(heavy: Path) -> None:
    assert _placements(heavy, (HEAVY_ROWS, 256)) == [False, False, False]


def test_a_busy_pool_is_not_probed_but_a_quick_model_still_runs_here(
    any_batch_add_one: Path,
) -> None:
    """A probe would wait behind the job holding the only infer request; a quick model waits
    for one quick inference. The pool is kept busy by one long blocking call on a thread."""

    async def run() -> tuple[bool, bool]:
        dispatcher = InferenceDispatcher(asyncio.get_running_loop())
        config = ModelConfig.model_validate({"name": "m", "base_path": str(any_batch_add_one)})
        compiled = compile_version(config, 1, any_batch_add_one / "1", dispatcher.queue, None)
        pool = compiled.pool
        small = Tensor("input", np.ones((1, 10), np.float32))
        large = Tensor("input", np.ones((LONG_ROWS, 10), np.float32))
        try:
            await _submitted(compiled, dispatcher, small, WARM_UP_CALLS)
            busy_probe = await _while_busy(pool, large, compiled.runs_here)
            for _ in range(WARM_UP_CALLS):  # the fastest of these counts: the model is quick
                pool.infer([small])
            busy_quick = await _while_busy(pool, large, compiled.runs_here)
            return busy_probe, busy_quick
        finally:
            dispatcher.close()
            pool.close()

    assert asyncio.run(run()) == (False, True)


async def _while_busy(pool, data: Tensor, check) -> bool:
    """``check()`` while a thread's blocking inference holds the pool's only infer request."""
    thread = threading.Thread(target=pool.infer, args=([data],))
    thread.start()
    while not pool.active:
        assert thread.is_alive(), "the long inference ended before it was seen running"
        await asyncio.sleep(0.0005)
    try:
        return check()
    finally:
        await asyncio.to_thread(thread.join)
