"""The HTTP server carrying the REST API (rest_app.py), on the event loop that serves gRPC.

The transport is uvicorn with its httptools parser, driving a bare ASGI function: the fastest of
the libraries measured by bench/bench_rest.py (docs/performance.md, "REST"). ovmsx makes the
listening socket itself, so that:

- Nagle's algorithm is off on every connection: asyncio disables it only on sockets created
  with ``IPPROTO_TCP``, and a response goes out in two writes (head, then body), which Nagle
  would hold back until the client's delayed ACK, 40 ms later;
- the processes of ``--grpc_workers N`` share the port with ``SO_REUSEPORT``, as they share
  gRPC's.

Limits: a request's head is bounded (rest_head_limit.py, 431 past 64 KiB); a head or body that
does not arrive in time closes its connection (rest_request_deadline.py, 408); its body counts
against the memory budget shared with gRPC (memory_budget.py, ``--grpc_memory_quota``) from
the moment it is being read until it is answered. A body that can never fit (over the quota,
or over 1 GiB) gets 413 and the connection is closed; one that does not fit now, beside the
requests in flight, gets 503 (the same request can succeed a moment later). Both are answered
before the body is read. There is no cap on connections: see docs/security.md.

Stopping drains: the listener closes, idle keep-alive connections close, and requests in
flight finish (up to the grace period).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
from collections.abc import Sequence

import orjson
import uvicorn

from ovmsx.frontend.cors import Cors
from ovmsx.frontend.memory_budget import MemoryBudget
from ovmsx.frontend.rest_app import RestApp
from ovmsx.frontend.rest_request_deadline import DEFAULT_TIMEOUT_SECONDS, DeadlineProtocol
from ovmsx.frontend.rest_response import RestResponse
from ovmsx.frontend.rest_routes import escapes
from ovmsx.frontend.v3_api import V3App, is_v3_path
from ovmsx.frontend.v3_stream import serve_v3

log = logging.getLogger("ovmsx.server")

HEADER_LENGTH = b"inference-header-content-length"
CONTENT_LENGTH = b"content-length"
# The largest body taken, as gRPC's 1 GiB receive limit (or the memory quota, if smaller): a
# larger one is refused before it is read (or as soon as a chunked one passes it), so no client
# can make the server buffer more.
MAX_BODY_BYTES = 1 << 30
BACKLOG = 2048
# An idle keep-alive connection is closed after this long (clients reconnect on their own).
KEEP_ALIVE_SECONDS = 60


def asgi_application(
    app: RestApp,
    budget: MemoryBudget | None = None,
    v3: V3App | None = None,
    cors: Cors | None = None,
):
    """The ASGI function handing each HTTP request to ``app``: method, raw path (still
    percent-encoded, so that an encoded "/" in a model name stays in the name), the
    ``Inference-Header-Content-Length`` header and the whole body. Bodies count against
    ``budget`` (a budget of its own if None) while they are read and answered. ``/v3`` and
    ``/v1`` paths (but the config API's) go to ``v3`` when given (v3_stream.py); every answer
    carries ``cors``'s headers, and OPTIONS on any path is answered with them alone."""
    budget = MemoryBudget() if budget is None else budget
    limit = min(MAX_BODY_BYTES, budget.quota)
    too_large = _too_large(limit)
    cors = Cors() if cors is None else cors
    _send = cors.sender(_send_response)

    async def application(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "OPTIONS":
            await _send(send, RestResponse(200, b""))
            return
        header = None
        declared = 0
        for key, value in scope["headers"]:
            if key == HEADER_LENGTH:
                header = value.decode("latin-1")
            elif key == CONTENT_LENGTH and value.isdigit():
                declared = int(value)
        if declared > limit:
            await _send(send, too_large, close=True)
            return
        if declared and not budget.take_on_loop(declared):
            # The connection stays open: uvicorn reads the unread body and drops it, so the
            # client, which may be sending it still, reads the answer.
            await _send(send, _refused(budget, declared))
            return
        body = _CountedBody(budget, limit, declared)
        try:
            data = await body.read(receive)
            if data is None:  # the client left before sending it all
                return
            if isinstance(data, RestResponse):
                await _send(send, data, close=data.status == 413)
                return
            path = scope["raw_path"].decode("latin-1")
            if v3 is not None and is_v3_path(path) and not escapes(path.partition("?")[0]):
                await serve_v3(v3, scope, data, receive, send, cors.headers)
                return
            response = await app.handle(scope["method"], path, header, data)
            del data
            await _send(send, response)
        finally:
            budget.give_back_on_loop(body.held)

    return application


class _CountedBody:
    """A request body being read, its bytes counted against ``budget`` as they arrive: the
    declared length up front, a chunked body (which has none) as it grows."""

    __slots__ = ("budget", "held", "limit")

    def __init__(self, budget: MemoryBudget, limit: int, declared: int) -> None:
        self.budget = budget
        self.limit = limit
        self.held = declared
        """Bytes counted against the budget, to give back once the request is answered."""

    async def read(self, receive) -> bytes | RestResponse | None:
        """The whole body; a refusal (413, 503) once a chunked body outgrows what fits; None
        if the client left before sending it all."""
        message = await receive()
        chunks = [message.get("body", b"")]
        size = len(chunks[0])
        while message.get("more_body", False):
            message = await receive()
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.held:
                if size > self.limit:
                    return _too_large(self.limit)
                if not self.budget.take_on_loop(size - self.held):
                    return _refused(self.budget, size)
                self.held = size
        if message["type"] == "http.disconnect":
            return None
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(limit: int) -> RestResponse:
    """413: the body can never be taken; the connection is closed after it."""
    return RestResponse(413, orjson.dumps({"error": f"Request body larger than {limit} bytes"}))


def _refused(budget: MemoryBudget, size: int) -> RestResponse:
    """503: the body would fit the quota, but not beside the requests in flight now."""
    return RestResponse(503, orjson.dumps({"error": budget.refusal(size)}))


async def _send_response(
    send, response: RestResponse, close: bool = False, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    """``close``: the connection ends after this answer (its request's body was not read);
    ``extra``: more headers."""
    headers = [
        (b"content-type", response.content_type.encode("latin-1")),
        (b"content-length", str(response.length).encode("latin-1")),
        *extra,
    ]
    if close:
        headers.append((b"connection", b"close"))
    if response.header_length is not None:
        headers.append((HEADER_LENGTH, str(response.header_length).encode("latin-1")))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    tail = response.tail
    await send({"type": "http.response.body", "body": response.body, "more_body": bool(tail)})
    last = len(tail) - 1
    for index, chunk in enumerate(tail):
        # Each binary output goes to the socket as it is: no copy into one buffer.
        await send({"type": "http.response.body", "body": chunk, "more_body": index < last})


def listening_socket(address: str, port: int, reuse_port: bool) -> socket.socket:
    """A non-blocking TCP socket listening on ``address:port`` (a name or an IPv4/IPv6
    address); raises ``OSError`` when it cannot bind."""
    family, kind, proto, _, where = socket.getaddrinfo(
        address, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(where)
        sock.listen(BACKLOG)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class RestServer:
    """uvicorn serving ``app`` on a socket of ovmsx's own, on the running event loop."""

    def __init__(
        self,
        app: RestApp,
        address: str,
        port: int,
        reuse_port: bool = False,
        budget: MemoryBudget | None = None,
        request_timeout: float = DEFAULT_TIMEOUT_SECONDS,
        v3: V3App | None = None,
        cors: Cors | None = None,
    ) -> None:
        """``request_timeout``: seconds a request's head, or its body, may take to arrive;
        ``v3``: the OpenAI-compatible endpoints; ``cors``: the CORS headers of every answer."""
        self._socket = listening_socket(address, port, reuse_port)
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(
            asgi_application(app, budget, v3, cors),
            # httptools, with a bound on request heads and a deadline for their bytes
            http=functools.partial(DeadlineProtocol, request_timeout=request_timeout),
            ws="none",
            lifespan="off",
            log_config=None,  # ovmsx's logging stays as ovmsx set it
            access_log=False,
            server_header=False,
            timeout_keep_alive=KEEP_ALIVE_SECONDS,
        )
        config.load()
        self._server = uvicorn.Server(config)
        self._ticker: asyncio.Task | None = None

    async def start(self) -> None:
        server = self._server
        server.lifespan = server.config.lifespan_class(server.config)
        await server.startup(sockets=[self._socket])
        # uvicorn's tick keeps the Date header current and notices should_exit.
        self._ticker = asyncio.create_task(server.main_loop())

    async def stop(self, grace: float) -> None:
        """Stop listening, close idle connections, and let requests in flight finish for up to
        ``grace`` seconds."""
        server = self._server
        server.config.timeout_graceful_shutdown = grace
        server.should_exit = True
        if self._ticker is not None:
            await self._ticker
        if server.started:
            await server.shutdown()
        self._socket.close()
