"""The HTTP server carrying the REST API (rest_app.py), on the event loop that serves gRPC.

The transport is uvicorn with its httptools parser, driving a bare ASGI function: the fastest of
the libraries measured by bench/bench_rest.py (docs/performance.md, "REST"). ovmsx makes the
listening socket itself, so that:

- Nagle's algorithm is off on every connection: asyncio disables it only on sockets created
  with ``IPPROTO_TCP``, and a response goes out in two writes (head, then body), which Nagle
  would hold back until the client's delayed ACK, 40 ms later;
- the processes of ``--grpc_workers N`` share the port with ``SO_REUSEPORT``, as they share
  gRPC's.

Stopping drains: the listener closes, idle keep-alive connections close, and requests in
flight finish (up to the grace period).
"""

from __future__ import annotations

import asyncio
import logging
import socket

import orjson
import uvicorn

from ovmsx.frontend.rest_app import RestApp
from ovmsx.frontend.rest_response import RestResponse

log = logging.getLogger("ovmsx.server")

HEADER_LENGTH = b"inference-header-content-length"
CONTENT_LENGTH = b"content-length"
# The largest body taken, as gRPC's 1 GiB receive limit: a larger one is refused before it is
# read (or as soon as a chunked one passes it), so no client can make the server buffer more.
MAX_BODY_BYTES = 1 << 30
BACKLOG = 2048
# An idle keep-alive connection is closed after this long (clients reconnect on their own).
KEEP_ALIVE_SECONDS = 60


def asgi_application(app: RestApp):
    """The ASGI function handing each HTTP request to ``app``: method, raw path (still
    percent-encoded, so that an encoded "/" in a model name stays in the name), the
    ``Inference-Header-Content-Length`` header and the whole body."""

    async def application(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        header = None
        for key, value in scope["headers"]:
            if key == HEADER_LENGTH:
                header = value.decode("latin-1")
            elif key == CONTENT_LENGTH and value.isdigit() and int(value) > MAX_BODY_BYTES:
                await _send(send, _TOO_LARGE, close=True)
                return
        message = await receive()
        body = message.get("body", b"")
        if message.get("more_body", False):
            chunks, size = [body], len(body)
            while message.get("more_body", False):
                message = await receive()
                chunks.append(message.get("body", b""))
                size += len(chunks[-1])
                if size > MAX_BODY_BYTES:  # chunked, without a length to refuse it by
                    del chunks
                    await _send(send, _TOO_LARGE, close=True)
                    return
            body = b"".join(chunks)
        if message["type"] == "http.disconnect":  # the client left before sending it all
            return
        path = scope["raw_path"].decode("latin-1")
        response = await app.handle(scope["method"], path, header, body)
        await _send(send, response)

    return application


_TOO_LARGE = RestResponse(
    413, orjson.dumps({"error": f"Request body larger than {MAX_BODY_BYTES} bytes"})
)


async def _send(send, response: RestResponse, close: bool = False) -> None:
    """``close``: the connection ends after this answer (its request's body was not read)."""
    headers = [
        (b"content-type", response.content_type.encode("latin-1")),
        (b"content-length", str(response.length).encode("latin-1")),
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

    def __init__(self, app: RestApp, address: str, port: int, reuse_port: bool = False) -> None:
        self._socket = listening_socket(address, port, reuse_port)
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(
            asgi_application(app),
            http="httptools",
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
