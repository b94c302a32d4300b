"""Where a pipeline request runs (in process, through the registry the server uses): a chain of
quick nodes on the caller's thread (``infer_pipeline_now`` answers), anything else on the event
loop (it returns None): before its nodes are measured, or with a demultiplexer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
from serving_pipelines import custom_node, model_node, pipeline, write_config

import ovmsx.custom_nodes
from ovmsx import Tensor
from ovmsx.call_timer import WARM_UP_CALLS
from ovmsx.config import load_config
from ovmsx.servables.infer_request import InferRequest
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry

REQ = "request"
NODE_PARAMS = {"add_number": "5", "sub_number": "2"}


class _Input:
    """A request input that is already a tensor (the registry's ``RequestInput``)."""

    def __init__(self, name: str, data: np.ndarray) -> None:
        self.name, self.datatype, self.shape = name, "FP32", tuple(data.shape)
        self._tensor = Tensor(name, data)

    def to_tensor(self, model_datatype: str, element_count: int) -> Tensor:
        return self._tensor


def _config(root: Path) -> Path:
    chain = pipeline(
        "chain",
        ["numbers"],
        [
            model_node("model", "add_one", {"input": (REQ, "numbers")}, {"output": "m"}),
            custom_node(
                "node", "add_one", {"input_numbers": ("model", "m")}, {"output_numbers": "n"},
                params=NODE_PARAMS,
            ),
        ],
        {"result": ("node", "n")},
    )  # fmt: skip
    fan_out = pipeline(
        "fan_out",
        ["numbers"],
        [
            model_node(
                "model", "add_one", {"input": (REQ, "numbers")}, {"output": "m"},
                demultiply_count=1,
            ),
        ],
        {"result": ("model", "m")},
    )  # fmt: skip
    library = {"name": "add_one", "base_path": str(ovmsx.custom_nodes.built_in("add_one"))}
    return write_config(root, [chain, fan_out], [library])


def _placements(root: Path) -> dict[str, list[bool]]:
    """Per pipeline: whether each of 4 x WARM_UP_CALLS requests was answered on this thread,
    every answer checked."""

    async def run() -> dict[str, list[bool]]:
        config = load_config(_config(root))
        dispatcher = InferenceDispatcher(asyncio.get_running_loop())
        registry = ServableRegistry(dispatcher)
        await registry.load(config.models, config.graphs, config.pipelines, config.libraries)
        seen: dict[str, list[bool]] = {"chain": [], "fan_out": []}
        try:
            for name, expected in (("chain", 1 + 5 - 2), ("fan_out", 1)):
                chosen = registry.pipelines[name]
                for n in range(4 * WARM_UP_CALLS):
                    x = np.full((1, 10), n, np.float32)
                    request = InferRequest(name, "", [_Input("numbers", x)])
                    result = registry.infer_pipeline_now(chosen, request)
                    seen[name].append(result is not None)
                    if result is None:
                        result = await registry.infer_pipeline(chosen, request)
                    (out,) = result.outputs
                    np.testing.assert_allclose(np.asarray(out).reshape(1, 10), x + expected)
        finally:
            await registry.unload()
            dispatcher.close()
        return seen

    return asyncio.run(run())


def test_a_chain_of_quick_nodes_runs_on_the_callers_thread_once_measured(tmp_path: Path) -> None:
    seen = _placements(tmp_path)
    chain = seen["chain"]
    assert not chain[0], "nothing is measured yet: the first request goes to the loop"
    assert all(chain[-WARM_UP_CALLS:]), chain
    # A demultiplexer makes shards, which the blocking run does not do: always on the loop.
    assert not any(seen["fan_out"])
