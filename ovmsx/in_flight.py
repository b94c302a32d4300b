"""How many calls are running on one servable definition, so that retiring it can wait for them.

A pipeline or graph definition that a reload replaces or removes stops taking new calls at
once, but the calls that already hold it run to their end (OVMS's retire waits the same way).
Calls start and end on the event loop, on gRPC's polling thread and on graph workers, so the
count is guarded by a lock: two uncontended lock operations per call.
"""

from __future__ import annotations

import asyncio
import threading

# How often a retirement looks at the count again: OVMS polls every 10 ms as well.
DRAIN_POLL_SECONDS = 0.01


class InFlight:
    __slots__ = ("_count", "_lock")

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self._count += 1

    def leave(self) -> None:
        with self._lock:
            self._count -= 1

    @property
    def count(self) -> int:
        return self._count

    async def drained(self) -> None:
        """Return once no call is running (at once when none is)."""
        while self._count > 0:
            await asyncio.sleep(DRAIN_POLL_SECONDS)
