"""Where a callee's next call runs: on the serving thread, or on a worker.

Handing work to another thread (or handing the GIL to one) costs tens of microseconds; a tiny
model, custom node or Python handler runs in a few. Callers keep a ``CallTimer`` per callee and
call it on their own thread (the event loop or the gRPC polling thread: "inline") only while
``quick`` holds. The decision must be the same on every run of the same server, so it rests on
what the call itself costs, not on what the threads around it happen to do:

- On a worker, a call's wall time also counts the time it waited for the GIL, which the serving
  threads hold while they work: under load a quick call measures hundreds of microseconds
  there. So a callee becomes quick when its calls' own CPU time averages under the budget and
  the fastest of its last calls on a worker took under ``SLOW_CALL_FACTOR`` budgets: a callee
  that blocks (sleeps, waits for I/O) longer than that never has such a call, and one that
  blocks for less comes back from the serving thread at its first call there (its average
  starts at that fastest call).
- Inline, a call's wall time is what the serving thread waited for it, and also any time the
  thread was preempted or lost the GIL meanwhile: on a busy machine one call in tens of
  thousands of a 30 µs callee measures 1-4 ms. So one call longer than ``BLOCKING_CALL_FACTOR``
  budgets (a call that sleeps or waits) sends the callee back to the workers at once; shorter
  calls count in an average, each at most ``SLOW_CALL_FACTOR`` budgets, which sends it back when
  it passes twice the budget: two slow calls in a row do, one spike does not. Each return
  doubles the number of worker calls the callee needs before it may come back (up to
  ``MAX_PROBATION_CALLS``), so one that turns slow now and then settles on the workers instead
  of blocking the serving thread again and again.

The first ``WARM_UP_CALLS`` calls run on a worker. Every change of placement is logged at INFO
with the times that caused it.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from time import perf_counter, thread_time
from typing import TypeVar

log = logging.getLogger("ovmsx.placement")

WARM_UP_CALLS = 8  # calls on a worker before a callee may run inline
SLOW_CALL_FACTOR = 10  # the most one inline call adds to the average, in budgets
BLOCKING_CALL_FACTOR = 100  # one inline call this many budgets long sends it back at once
MAX_PROBATION_CALLS = 1024
_WEIGHT = 0.1  # of the newest call in the moving averages

_Result = TypeVar("_Result")
_worker = threading.local()


def mark_worker_thread() -> None:
    """Declare the calling thread a worker: calls timed on it are not inline."""
    _worker.flag = True


def on_worker_thread() -> bool:
    return getattr(_worker, "flag", False)


class CallTimer:
    __slots__ = (
        "_budget",
        "_calls",
        "_cpu",
        "_cpu_samples",
        "_inline_wall",
        "_lock",
        "_name",
        "_probation",
        "_recent",
        "quick",
    )

    def __init__(self, budget_s: float, name: str = "") -> None:
        self._budget = budget_s
        self._name = name
        self._lock = threading.Lock()  # calls may be timed on several threads at once
        self._calls = 0  # on workers, since the callee last came back to them
        self._probation = WARM_UP_CALLS  # worker calls needed before it may run inline
        self._cpu = float("inf")  # moving average of the calls' CPU time
        self._cpu_samples = 0
        self._recent: deque[float] = deque(maxlen=WARM_UP_CALLS)  # worker calls' wall times
        self._inline_wall = 0.0  # moving average of the inline calls' wall time
        self.quick = False
        """Whether the next call may run inline."""

    def timed(self, call: Callable[..., _Result], *args) -> _Result:
        """``call(*args)``, measured (failures count too)."""
        if self.quick and not on_worker_thread():
            # Inline and quick, only the wall time decides: reading this thread's CPU clock
            # costs a system call (2-3 µs), as much as some callees.
            start = perf_counter()
            try:
                return call(*args)
            finally:
                self._inline_quick_call(perf_counter() - start)
        inline = not on_worker_thread()
        cpu = thread_time()
        start = perf_counter()
        try:
            return call(*args)
        finally:
            wall = perf_counter() - start
            self.record(wall, thread_time() - cpu, inline)

    def record(self, wall: float, cpu: float | None, inline: bool) -> None:
        """One call's wall time and (unless None) CPU time."""
        with self._lock:
            if cpu is not None:
                self._cpu_samples += 1
                if self._cpu_samples <= WARM_UP_CALLS:
                    # The first calls pay for cold caches and first-time allocations: the
                    # fastest of them is the better guess of what a call costs once warm.
                    self._cpu = min(self._cpu, cpu)
                else:
                    self._cpu += _WEIGHT * (cpu - self._cpu)
            if not (inline and self.quick):
                # A worker call, or a call off the workers while not quick (a caller that runs
                # everything on its own thread), which the serving thread waited for as it
                # would for a worker: both count as worker calls.
                self._worker_call(wall)
                return
        self._inline_quick_call(wall)

    def _worker_call(self, wall: float) -> None:
        self._calls += 1
        self._recent.append(wall)
        if self.quick or self._calls < self._probation:
            return
        fastest = min(self._recent)
        if self._cpu < self._budget and fastest < SLOW_CALL_FACTOR * self._budget:
            self.quick = True
            self._inline_wall = fastest
            log.info(
                "%s runs inline now: %.0f µs of CPU a call on average, the fastest of its "
                "last %d calls on a worker %.0f µs (budget %.0f µs)",
                self._name or "a callee",
                self._cpu * 1e6,
                len(self._recent),
                fastest * 1e6,
                self._budget * 1e6,
            )

    def _inline_quick_call(self, wall: float) -> None:
        # Without the lock while nothing changes: a lost update of the average between two
        # serving threads is harmless, and the lock costs as much as a small callee's call.
        budget = self._budget
        self._inline_wall += _WEIGHT * (min(wall, SLOW_CALL_FACTOR * budget) - self._inline_wall)
        slow_call = wall > BLOCKING_CALL_FACTOR * budget
        if not slow_call and self._inline_wall <= 2 * budget:
            return
        with self._lock:
            if self.quick:  # not sent back meanwhile by another thread
                self._send_back(wall, slow_call)

    def _send_back(self, wall: float, slow_call: bool) -> None:
        self.quick = False
        self._calls = 0
        self._recent.clear()
        self._probation = min(2 * self._probation, MAX_PROBATION_CALLS)
        reason = (
            f"a call took {wall * 1e6:,.0f} µs on the serving thread"
            if slow_call
            else f"its calls there average {self._inline_wall * 1e6:,.0f} µs"
        )
        log.info(
            "%s moves to a worker: %s (budget %.0f µs); %d calls there before it may return",
            self._name or "a callee",
            reason,
            self._budget * 1e6,
            self._probation,
        )
