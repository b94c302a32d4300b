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

log = logging.getLogger("ovmsx.frontend")

OK = 0
CANCELLED = 1
UNKNOWN = 2
RESOURCE_EXHAUSTED = 8
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14


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
