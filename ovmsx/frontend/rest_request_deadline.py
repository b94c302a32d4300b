"""A deadline for each request's bytes: a client that stalls cannot hold a connection.

uvicorn times out idle keep-alive connections only. A client that opens a connection and sends
nothing, or sends a request head a byte at a time, or part of a body and then nothing, would
hold its connection (a socket, a file descriptor, buffers) for as long as it liked, and a few
thousand such clients exhaust the process's descriptors. Here every connection has a deadline
while the server waits for a request's bytes:

- a new connection must begin a request within ``timeout`` seconds;
- a request's head (request line and headers) must be whole within ``timeout`` of its first
  byte, however it trickles in;
- its body must be whole within ``timeout`` of the head's end, plus a second for every
  ``MIN_BODY_RATE`` bytes received, so that a large body on a slow link gets the time it needs
  and a trickle does not.

Past the deadline the request is answered 408 ``{"error": ...}`` when an answer can still be
given (no earlier answer pending or begun), and the connection is closed; each such close is
logged at DEBUG with the count so far. Once a request is whole nothing is timed (inference may
take any time), until the next one begins.

Cost: one timer per connection. Moving the deadline only sets a number; the timer, when it
fires before the deadline it finds, re-arms itself for it. A busy keep-alive connection thus
costs a timer event per ``timeout`` seconds, not one per request, and no task is created.
"""

from __future__ import annotations

import enum
import itertools
import logging
from asyncio import TimerHandle

from ovmsx.frontend.rest_head_limit import BoundedHeadProtocol, closing_answer

log = logging.getLogger("ovmsx.server")

# nginx's client_header_timeout and client_body_timeout are 60 s, Apache's RequestReadTimeout
# gives a head 20 to 40 s; half a minute leaves slow clients room and stalled ones little.
DEFAULT_TIMEOUT_SECONDS = 30.0
# The slowest a body may come once its first `timeout` seconds are spent, as Apache's
# RequestReadTimeout MinRate: a real upload is far faster, a trickle far slower.
MIN_BODY_RATE = 32 << 10
# Stalled connections closed by this process so far, for the DEBUG log.
_CLOSED = itertools.count(1)


class _Phase(enum.Enum):
    NEW = "a first request"  # connected, no request byte yet
    HEAD = "a request head"
    BODY = "a request body"
    WHOLE = ""  # nothing awaited from the client


class DeadlineProtocol(BoundedHeadProtocol):
    """BoundedHeadProtocol closing a connection whose request does not arrive in time."""

    def __init__(self, *args, request_timeout: float = DEFAULT_TIMEOUT_SECONDS, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._timeout = request_timeout
        self._phase = _Phase.NEW
        self._deadline: float | None = None
        self._timer: TimerHandle | None = None
        self._begun = 0  # requests begun on this connection
        self._answered = 0  # requests whose answer is complete

    # -- where the deadline moves ------------------------------------------------------------

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await(_Phase.NEW, self.loop.time() + self._timeout)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._begun += 1
        self._await(_Phase.HEAD, self.loop.time() + self._timeout)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        # A request without a body completes at once (on_message_complete, next).
        self._await(_Phase.BODY, self.loop.time() + self._timeout)

    def on_body(self, body: bytes) -> None:
        if self._deadline is not None:
            self._deadline += len(body) / MIN_BODY_RATE
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._phase = _Phase.WHOLE
        self._deadline = None
        super().on_message_complete()

    def on_response_complete(self) -> None:
        self._answered += 1
        super().on_response_complete()

    def close_with(self, answer: bytes) -> None:
        self._phase = _Phase.WHOLE  # nothing more is awaited from a refused client
        self._deadline = None
        super().close_with(answer)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._deadline = None
        super().connection_lost(exc)

    # -- the one timer -----------------------------------------------------------------------

    def _await(self, phase: _Phase, deadline: float) -> None:
        self._phase = phase
        self._deadline = deadline
        if self._timer is None:
            self._timer = self.loop.call_at(deadline, self._on_timer)
        # An armed timer fires no later than this deadline: deadlines only move later.

    def _on_timer(self) -> None:
        self._timer = None
        deadline = self._deadline
        if deadline is None or self.transport.is_closing():
            return
        if deadline > self.loop.time():
            self._timer = self.loop.call_at(deadline, self._on_timer)
            return
        self._expire()

    def _expire(self) -> None:
        phase = self._phase
        # An answer can still be given when every earlier request on the connection has its
        # answer, and this one has none begun (an early 413 or 503 may have been sent already).
        cycle = self.cycle
        answerable = self._answered == self._begun - 1 and (
            phase is _Phase.HEAD
            or (phase is _Phase.BODY and cycle is not None and not cycle.response_started)
        )
        log.debug(
            "REST connection from %s closed: %s did not arrive within %g s%s (%d stalled "
            "connections closed so far)",
            _peer(self.client),
            phase.value,
            self._timeout,
            ", answered 408" if answerable else "",
            next(_CLOSED),
        )
        if answerable:
            self.close_with(_timed_out(self._timeout))
        else:
            self._phase = _Phase.WHOLE
            self._deadline = None
            self.transport.close()


def _timed_out(timeout: float) -> bytes:
    return closing_answer(
        b"408 Request Timeout", f"Request not received within {timeout:g} seconds"
    )


def _peer(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "an unknown peer"
