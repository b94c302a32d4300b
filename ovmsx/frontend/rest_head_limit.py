"""uvicorn's httptools protocol with a bound on a request's head (request line and headers).

httptools (llhttp) sets no limit of its own, and uvicorn adds none: a client sending an endless
header line would make the server buffer all of it. Here the bytes of a head still being read
are counted as they arrive; past ``MAX_HEAD_BYTES`` the request is answered 431 (RFC 6585,
"Request Header Fields Too Large") and the connection closed.

The close lingers, as web servers' do: closing a socket with unread bytes in it makes the
kernel reset the connection, and a reset can discard the answer before the client reads it.
So the server ends its side after the answer and reads on, dropping what comes, until the
client closes, ``LINGER_BYTES`` more have come, or ``LINGER_SECONDS`` have passed.

Counting whole reads keeps the check off the parser's callbacks: a read is counted when it
arrives while a head is being read; the read in which a head begins is not, so the parser holds
at most ``MAX_HEAD_BYTES`` plus one read (asyncio reads at most 256 KiB at a time).
"""

from __future__ import annotations

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# Generous next to common servers (8-16 KiB a line): KServe clients send short heads, but
# proxies and tokens can add kilobytes.
MAX_HEAD_BYTES = 64 << 10
# Enough for what a client has in flight when the answer reaches it (a few MiB of socket
# buffers on loopback); a client still sending after that is cut off.
LINGER_BYTES = 8 << 20
LINGER_SECONDS = 5.0


def closing_answer(status_line: bytes, message: str) -> bytes:
    """A whole HTTP answer ``{"error": message}`` that closes the connection, written straight
    to the transport when there is no request for the application to answer."""
    body = orjson.dumps({"error": message})
    head = (
        b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"connection: close\r\n\r\n" % (status_line, len(body))
    )
    return head + body


_REFUSAL = closing_answer(
    b"431 Request Header Fields Too Large",
    f"Request header section larger than {MAX_HEAD_BYTES} bytes",
)


class BoundedHeadProtocol(HttpToolsProtocol):
    """HttpToolsProtocol refusing a head larger than ``MAX_HEAD_BYTES`` with 431."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = False
        self._head_bytes = 0
        self._dropping = -1  # bytes still dropped while lingering; -1: not refused

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_bytes = 0

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        if self._dropping >= 0:
            self._dropping -= len(data)
            if self._dropping < 0:
                self.transport.close()
            return
        if self._in_head:
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._refuse()
                return
        super().data_received(data)

    def _refuse(self) -> None:
        self._in_head = False
        self.close_with(_REFUSAL)

    def close_with(self, answer: bytes) -> None:
        """Write ``answer`` and close, lingering (above) so that the client can read it."""
        self._dropping = LINGER_BYTES
        transport = self.transport
        transport.write(answer)
        if transport.can_write_eof():
            transport.write_eof()  # sent once the answer is written
            self.loop.call_later(LINGER_SECONDS, transport.close)
        else:
            transport.close()
