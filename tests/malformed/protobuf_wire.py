"""Protocol Buffers wire format by hand (protobuf.dev/programming-guides/encoding): for
messages no protobuf library would write — truncated varints, field number 0, wrong wire
types, lengths past the end."""

from __future__ import annotations

VARINT = 0
FIXED64 = 1
LEN = 2
START_GROUP = 3
END_GROUP = 4
FIXED32 = 5


def varint(value: int) -> bytes:
    """``value`` (two's complement in 64 bits when negative) as a base-128 varint."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def length_delimited(field: int, payload: bytes) -> bytes:
    return tag(field, LEN) + varint(len(payload)) + payload


def varint_field(field: int, value: int) -> bytes:
    return tag(field, VARINT) + varint(value)
