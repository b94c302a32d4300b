"""The frames the server and an engine process exchange over their socket pair.

A frame is a 4-byte little-endian length and a pickled message. Both ends are ovmsx, started
together from the same install, so pickle's speed is safe to have; nothing else reads this socket.
One frame carries everything one engine step produced, so the cost is per step, not per token.
"""

from __future__ import annotations

import pickle
import select
import socket
import struct

_LENGTH = struct.Struct("<I")


def pack(message: object) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


class FrameReader:
    """Cuts a byte stream into messages, however the reads split it."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[object]:
        buffer = self._buffer
        buffer += data
        messages = []
        start = 0
        size = len(buffer)
        while size - start >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(buffer, start)
            end = start + _LENGTH.size + length
            if end > size:
                break
            messages.append(pickle.loads(buffer[start + _LENGTH.size : end]))
            start = end
        if start:
            del buffer[:start]
        return messages


def receive(sock: socket.socket, reader: FrameReader) -> list | None:
    """Every message waiting on the non-blocking ``sock`` (maybe none); None once the other
    end has closed it."""
    messages: list = []
    while True:
        try:
            data = sock.recv(1 << 20)
        except BlockingIOError:
            return messages
        except OSError:
            return None
        if not data:
            return None
        messages.extend(reader.feed(data))


def send(sock: socket.socket, message: object) -> None:
    """Send ``message`` whole on the non-blocking ``sock``, waiting while its buffer is full."""
    data = pack(message)
    view = memoryview(data)
    while view:
        try:
            sent = sock.send(view)
        except BlockingIOError:
            select.select([], [sock.fileno()], [])
            continue
        view = view[sent:]
