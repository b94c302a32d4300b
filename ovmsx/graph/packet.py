"""Packets: a value at a timestamp, the unit that flows along a graph's streams.

Timestamps are plain ints (microseconds when the server picks them). ``DONE`` is the bound of a
closed stream: no packet will ever arrive there again.
"""

from __future__ import annotations

from typing import NamedTuple

# MediaPipe reserves a few values at both ends of int64 for special timestamps; packets must
# lie strictly inside. OVMS rejects OVMS_MP_TIMESTAMP values outside this range.
MIN_TIMESTAMP = -(2**63) + 3
MAX_TIMESTAMP = 2**63 - 4
DONE = 2**63  # above every packet timestamp: the bound of a closed stream
UNSET = -(2**63)  # below every packet timestamp: nothing seen yet


class Packet(NamedTuple):
    value: object
    timestamp: int
