"""Calling a custom node from the event loop: on a thread, unless the node has proven quick.

A thread hop costs tens of microseconds; a small custom node (add_one on [1,10]) runs in about
one. So each node keeps a moving average of its own call time: while it stays under
``INLINE_BUDGET_S`` the call runs on the loop thread (the C code releases the GIL, but the loop
waits for it), and a node that turns slow goes back to a thread at its next call. The first
calls of every node run on a thread, until there is an average to go by.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from ovmsx import _core

INLINE_BUDGET_S = 50e-6  # longest average call the loop may wait for
WARM_UP_CALLS = 8  # calls measured on a thread before the node may run inline
_WEIGHT = 0.1  # of the newest call in the moving average


class CustomNodeCaller:
    __slots__ = ("_average", "_calls", "_node")

    def __init__(self, node: _core.CustomNode) -> None:
        self._node = node
        self._average = float("inf")
        self._calls = 0

    @property
    def inline(self) -> bool:
        return self._calls >= WARM_UP_CALLS and self._average < INLINE_BUDGET_S

    async def execute(self, inputs: Sequence[_core.Tensor]) -> list[_core.Tensor]:
        if self.inline:
            return self._timed(inputs)
        return await asyncio.to_thread(self._timed, inputs)

    def _timed(self, inputs: Sequence[_core.Tensor]) -> list[_core.Tensor]:
        start = time.perf_counter()
        try:
            return self._node.execute(inputs)
        finally:
            elapsed = time.perf_counter() - start
            self._calls += 1
            if self._average == float("inf"):
                self._average = elapsed
            else:
                self._average += _WEIGHT * (elapsed - self._average)
