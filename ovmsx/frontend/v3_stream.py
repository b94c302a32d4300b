"""Carrying a ``/v3`` request over ASGI: its headers in, a whole or streamed answer out, and the
client's departure noticed at once.

While the answer is being made (a unary generation can take seconds) and while a stream is
being written, the client's connection is watched: when it closes, the work is cancelled, which
stops the generation in the engine and frees its KV cache (llm_servable.py). A stream is written
chunk by chunk as the engine produces text (chunked transfer encoding), with OVMS's headers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Sequence

from ovmsx.frontend.v3_api import V3App, V3Response

_STREAM_HEADERS = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"connection", b"keep-alive"),
)


async def serve_v3(
    v3: V3App,
    scope: dict,
    body: bytes,
    receive,
    send,
    extra_headers: Sequence[tuple[bytes, bytes]],
) -> None:
    headers = {
        key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]
    }
    path = scope["raw_path"].decode("latin-1")
    departure = asyncio.ensure_future(_departure(receive))
    response = None
    try:
        response = await _unless_gone(v3.handle(scope["method"], path, headers, body), departure)
        if response is None:
            return
        if isinstance(response.body, bytes):
            await _send_whole(send, response, extra_headers)
        else:
            await _unless_gone(_send_stream(send, response, extra_headers), departure)
    finally:
        departure.cancel()
        if response is not None and not isinstance(response.body, bytes):
            # Always, even if sending never began: it stops the generation and ends the call.
            await response.body.aclose()


async def _departure(receive) -> None:
    """Returns when the client has closed its connection (or the answer is complete)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _unless_gone(work: Awaitable, departure: asyncio.Future):
    """``work``'s result, or None (with ``work`` cancelled) if the client leaves first."""
    task = asyncio.ensure_future(work)
    await asyncio.wait((task, departure), return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


async def _send_whole(send, response: V3Response, extra: Sequence[tuple[bytes, bytes]]) -> None:
    body = response.body
    headers = [
        (b"content-type", response.content_type.encode("latin-1")),
        (b"content-length", str(len(body)).encode("latin-1")),
        *((key.encode("latin-1"), value.encode("latin-1")) for key, value in response.headers),
        *extra,
    ]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _send_stream(send, response: V3Response, extra: Sequence[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": response.status,
            "headers": [*_STREAM_HEADERS, *extra],
        }
    )
    async for chunk in response.body:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})
