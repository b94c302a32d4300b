"""A moving average of how long a call takes, to decide how to make the next one.

Handing work to another thread (or handing the GIL to one) costs tens of microseconds; a tiny
model or custom node runs in a few. Callers keep a ``CallTimer`` per callee and take the cheap
path only while ``quick`` holds: the average of the recent calls, once there are
``WARM_UP_CALLS`` of them, stays under the budget (the average starts from the fastest warm-up
call, since the first calls of anything are slow). A callee that turns slow loses ``quick`` at
its next call, so one slow call is the most the cheap path ever costs in a row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

WARM_UP_CALLS = 8  # calls measured before the average is trusted
_WEIGHT = 0.1  # of the newest call in the moving average

_Result = TypeVar("_Result")


class CallTimer:
    __slots__ = ("_average", "_budget", "_calls")

    def __init__(self, budget_s: float) -> None:
        self._budget = budget_s
        self._average = float("inf")
        self._calls = 0

    @property
    def quick(self) -> bool:
        return self._calls >= WARM_UP_CALLS and self._average < self._budget

    def timed(self, call: Callable[..., _Result], *args) -> _Result:
        """``call(*args)``, its duration added to the average (failures count too)."""
        start = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.record(time.perf_counter() - start)

    def record(self, elapsed: float) -> None:
        self._calls += 1
        if self._calls <= WARM_UP_CALLS:
            # The first calls pay for cold caches and first-time allocations: the fastest of
            # them is the better guess of what a call costs once warm.
            self._average = min(self._average, elapsed)
        else:
            self._average += _WEIGHT * (elapsed - self._average)
