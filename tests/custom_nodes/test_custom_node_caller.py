"""How pipelines call custom nodes: on a thread until a node proves quick, then inline."""

from __future__ import annotations

import asyncio
import threading

import numpy as np

import ovmsx.custom_nodes
from ovmsx import _core
from ovmsx.pipeline.custom_call import WARM_UP_CALLS, CustomNodeCaller


def test_quick_node_moves_onto_the_loop_thread_and_answers_the_same() -> None:
    node = _core.CustomNodeLibrary.load(str(ovmsx.custom_nodes.built_in("add_one"))).initialize({})
    caller = CustomNodeCaller(node)
    tensor = _core.Tensor("input_numbers", np.arange(10, dtype=np.float32).reshape(1, 10))
    seen_threads: list[bool] = []

    async def calls() -> None:
        loop_thread = threading.get_ident()
        for _ in range(WARM_UP_CALLS + 4):
            was_inline = caller.inline
            (out,) = await caller.execute([tensor])
            np.testing.assert_array_equal(np.asarray(out), np.asarray(tensor) + 1)
            seen_threads.append(was_inline and threading.get_ident() == loop_thread)

    asyncio.run(calls())
    node.close()
    assert seen_threads[:WARM_UP_CALLS] == [False] * WARM_UP_CALLS
    assert all(seen_threads[WARM_UP_CALLS:])
    assert caller.inline


def test_slow_node_stays_on_a_thread() -> None:
    caller = CustomNodeCaller(_SlowNode())

    async def calls() -> None:
        for _ in range(WARM_UP_CALLS + 2):
            await caller.execute([])

    asyncio.run(calls())
    assert not caller.inline


class _SlowNode:
    """Stands in for a library whose calls take milliseconds."""

    def execute(self, inputs):
        threading.Event().wait(0.002)
        return []
