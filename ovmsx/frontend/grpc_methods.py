"""What a gRPC method is to ovmsx, whichever transport serves it (grpc_transport.py).

A ``Method`` is a unary handler, called with the request's bytes, or a stream handler, an async
generator over the request messages. Handlers end a call with a status other than OK by raising
``AbortCall``; anything else they raise ends it with INTERNAL, logged with its traceback.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial

import grpc

from ovmsx.frontend.memory_budget import MemoryBudget

log = logging.getLogger("ovmsx.frontend")

OK = 0
CANCELLED = 1
UNKNOWN = 2
RESOURCE_EXHAUSTED = 8
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14

# Messages at least this large leave freed memory in glibc's arenas (gRPC reads them in pieces
# on its own threads; the server raises glibc's trim threshold so that steady traffic reuses
# it): when no call is left in flight after one, the transport gives that memory back to the
# kernel.
LARGE_MESSAGE = 16 << 20


class AbortCall(Exception):
    """Ends a call with a gRPC status other than OK; raised by handlers."""

    def __init__(self, code: int, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class ClientGone(Exception):
    """A stream's answer could not be sent: the client has gone."""


class CallContext:
    """What a handler on the loop may do with its call (the part of grpc's ServicerContext
    that ovmsx uses)."""

    __slots__ = ()

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise AbortCall(code.value[0], details)


CALL_CONTEXT = CallContext()

Deferred = Callable[[CallContext], Awaitable[bytes]]
UnaryHandler = Callable[[bytes], "bytes | Deferred"]
StreamHandler = Callable[[AsyncIterator[bytes], CallContext], AsyncIterator[bytes]]


@dataclass(frozen=True)
class Method:
    """One RPC. ``unary`` returns the answer's bytes when it can answer at once, else the rest
    of its work as a coroutine function (``Deferred``) for the event loop; ``stream`` runs on
    the event loop."""

    unary: UnaryHandler | None = None
    stream: StreamHandler | None = None


def on_loop(handler: Callable[[bytes, CallContext], Awaitable[bytes]]) -> UnaryHandler:
    """A unary handler that always runs on the event loop."""
    return lambda message: partial(handler, message)


def status_of(error: BaseException, handler: object) -> tuple[int, str]:
    """The status a handler's exception ends its call with: its own (AbortCall), CANCELLED
    when the client went away, INTERNAL (logged with its traceback) for anything else."""
    if isinstance(error, AbortCall):
        return error.code, error.details
    if isinstance(error, (asyncio.CancelledError, ClientGone)):
        return CANCELLED, "cancelled"
    log.error("%s failed", handler, exc_info=error)
    return INTERNAL, "Internal server error"


class CountedMessages:
    """A stream's request messages as the handler reads them, each counted against the memory
    budget until the handler asks for the next one (a model stream answers each message before
    that; a graph stream hands it to the graph) or the stream ends. One that does not fit ends
    the stream with RESOURCE_EXHAUSTED (``refused``), whatever the handler makes of the error
    raised in its iterator. Both transports read their streams through it."""

    __slots__ = ("_budget", "_note_large", "refused")

    def __init__(self, budget: MemoryBudget, note_large: Callable[[], None]) -> None:
        self._budget = budget
        self._note_large = note_large
        self.refused: tuple[int, str] | None = None

    async def messages(
        self, receive: Callable[[], Awaitable[bytes | None]]
    ) -> AsyncIterator[bytes]:
        """The messages ``receive`` gives, until it gives None. This frame lets go of each
        message when its budget is given back."""
        while True:
            message = await receive()
            if message is None:
                return
            size = len(message)
            if size >= LARGE_MESSAGE:
                self._note_large()
            if not self._budget.take_on_loop(size):
                message = None  # dropped now, not kept alive by the error's traceback
                self.refused = (RESOURCE_EXHAUSTED, self._budget.refusal(size))
                raise AbortCall(*self.refused)
            try:
                yield message
            finally:
                message = None
                self._budget.give_back_on_loop(size)
