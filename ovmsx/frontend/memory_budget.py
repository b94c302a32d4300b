"""The budget of request bytes in flight (``--grpc_memory_quota``), shared by gRPC and REST.

A request's bytes count from the moment ovmsx holds its message (a gRPC message delivered by
the C core, a REST body being read) until it is answered; a request that would take the total
over the quota is refused at once, before any work is done for it, and its bytes are dropped.
Only requests count: answers, the C core's own buffers and the models' memory do not.

Threads: gRPC messages are taken on the polling thread, REST bodies and stream messages on the
event loop. Each thread writes only its own counter (a plain int, so the hot path takes no
lock and no update is ever lost); the check adds both. A request taken on one thread may be
given back on the other (a deferred gRPC call ends on the loop): only the sum matters. The
check may read the other thread's counter a moment before it changes, so the total can pass
the quota by at most the one request the other thread is admitting at that instant.
"""

from __future__ import annotations

# OVMS's default for --grpc_memory_quota.
DEFAULT_QUOTA = 2 << 30


class MemoryBudget:
    """Request bytes in flight against ``quota``.

    ``poller`` is written by the gRPC polling thread only, which updates it inline
    (grpc_core.py: a method call per request measured twice the cost of the arithmetic);
    ``loop`` only by the event loop, through ``take_on_loop`` and ``give_back_on_loop``."""

    __slots__ = ("loop", "poller", "quota")

    def __init__(self, quota: int = DEFAULT_QUOTA) -> None:
        self.quota = quota
        self.poller = 0
        self.loop = 0

    @property
    def used(self) -> int:
        """Bytes of requests in flight now."""
        return self.poller + self.loop

    def take_on_loop(self, size: int) -> bool:
        """Counts ``size`` bytes in; False (nothing counted) if they do not fit."""
        if self.poller + self.loop + size > self.quota:
            return False
        self.loop += size
        return True

    def give_back_on_loop(self, size: int) -> None:
        self.loop -= size

    def refusal(self, size: int) -> str:
        """Why a request of ``size`` bytes was refused, with the sizes."""
        if size > self.quota:
            return (
                f"Request of {size} bytes is larger than the memory quota of {self.quota} "
                "bytes (--grpc_memory_quota)"
            )
        return (
            f"Request of {size} bytes refused: requests in flight hold {self.used} of the "
            f"memory quota of {self.quota} bytes (--grpc_memory_quota)"
        )
