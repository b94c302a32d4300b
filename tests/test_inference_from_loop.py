"""How a graph on the event loop infers: a quick model right there while the loop has no other
request, through OpenVINO's thread otherwise (ovmsx/servables/model_loader.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovmsx import Tensor
from ovmsx.call_timer import WARM_UP_CALLS
from ovmsx.config.model_config import ModelConfig
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.model_loader import compile_version


@pytest.fixture(scope="module")
def add_one(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = ops.parameter([1, 10], ov.Type.f32, name="input")
    y = ops.add(x, ops.constant(np.float32(1)))
    y.output(0).set_names({"output"})
    base = tmp_path_factory.mktemp("add_one")
    (base / "1").mkdir()
    ov.save_model(ov.Model([y], [x], "add_one"), base / "1" / "model.xml")
    return base


async def _where_it_ran(base: Path, other_requests: int) -> tuple[bool, np.ndarray]:
    """(whether the inference waited for OpenVINO's thread, the answer)."""
    dispatcher = InferenceDispatcher(asyncio.get_running_loop())
    config = ModelConfig.model_validate({"name": "add_one", "base_path": str(base)})
    compiled = compile_version(config, 1, base / "1", dispatcher.queue, None)
    data = Tensor("input", np.arange(10, dtype=np.float32).reshape(1, 10))
    for _ in range(WARM_UP_CALLS):  # measured, so the pool knows the model is quick
        compiled.pool.infer([data])
    assert compiled.quick
    dispatcher.requests_on_loop = 1 + other_requests  # this request, and the others on the loop
    try:
        task = asyncio.create_task(compiled.infer_from_loop([data], dispatcher))
        await asyncio.sleep(0)  # the task's first step: done already if it ran inline
        handed_off = dispatcher.in_flight == 1
        (answer,) = await task
        return handed_off, np.array(answer)
    finally:
        dispatcher.close()
        compiled.pool.close()


@pytest.mark.parametrize(("other_requests", "handed_off"), [(0, False), (3, True)])
def test_a_quick_model_runs_on_the_loop_only_while_it_is_alone(
    add_one: Path, other_requests: int, handed_off: bool
) -> None:
    went, answer = asyncio.run(_where_it_ran(add_one, other_requests))
    assert went is handed_off
    np.testing.assert_array_equal(answer, np.arange(10, dtype=np.float32).reshape(1, 10) + 1)
