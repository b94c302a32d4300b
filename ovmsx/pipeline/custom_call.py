"""Calling a custom node from the event loop: on a thread, unless the node has proven quick.

A thread hop costs tens of microseconds; a small custom node (add_one on [1,10]) runs in about
one. So each node keeps a moving average of its own call time (``CallTimer``): while it stays
under ``INLINE_BUDGET_S`` the call runs on the loop thread (the C code releases the GIL, but the
loop waits for it), and a node that turns slow goes back to a thread at its next call. The
first calls of every node run on a thread, until there is an average to go by.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ovmsx import _core
from ovmsx.call_timer import WARM_UP_CALLS, CallTimer, mark_worker_thread

INLINE_BUDGET_S = 50e-6  # longest average call the loop may wait for

__all__ = ["INLINE_BUDGET_S", "WARM_UP_CALLS", "CustomNodeCaller"]


class CustomNodeCaller:
    __slots__ = ("_node", "_timer")

    def __init__(self, node: _core.CustomNode, name: str = "a custom node") -> None:
        self._node = node
        self._timer = CallTimer(INLINE_BUDGET_S, name)

    @property
    def inline(self) -> bool:
        return self._timer.quick

    async def execute(self, inputs: Sequence[_core.Tensor]) -> list[_core.Tensor]:
        if self.inline:
            return self.execute_here(inputs)
        return await asyncio.to_thread(_on_worker, self._timer.timed, self._node.execute, inputs)

    def execute_here(self, inputs: Sequence[_core.Tensor]) -> list[_core.Tensor]:
        """The call on this thread, timed: for the loop once the node is quick, and for
        pipelines run on the thread that has the request."""
        return self._timer.timed(self._node.execute, inputs)


def _on_worker(call, *args):
    """``call(*args)`` on one of asyncio's executor threads, which are workers."""
    mark_worker_thread()
    return call(*args)
