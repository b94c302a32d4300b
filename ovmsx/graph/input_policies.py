"""Input stream handlers: when a node may run, and with which packets.

A policy looks at a node's input slots and answers either "not yet" (None) or the timestamp
to process and the slots whose head packet belongs to that call. Timestamp bounds make the
difference between "not yet" and "never": a slot whose next packet cannot come before ``t``
(its bound passed ``t``, or its stream closed) does not hold a node back at ``t``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from ovmsx.graph.packet import DONE, UNSET, Packet


class InputSlot:
    """One input stream of one node in one graph instance."""

    __slots__ = ("back_edge", "bound", "queue", "stream", "tag_index")

    def __init__(self, tag_index: str, stream: str, back_edge: bool) -> None:
        self.tag_index = tag_index
        self.stream = stream
        self.back_edge = back_edge
        self.queue: deque[Packet] = deque()
        self.bound = UNSET  # lowest timestamp a new packet may carry

    def next_timestamp(self) -> int:
        """The earliest timestamp this slot can still deliver.

        An empty back edge never holds its node back: its packets come from downstream of the
        node itself, so waiting for them would wait forever.
        """
        if self.queue:
            return self.queue[0].timestamp
        return DONE if self.back_edge else self.bound


Selection = tuple[int, list[InputSlot]]


def _synchronized(slots: Sequence[InputSlot]) -> Selection | None:
    """All slots at one timestamp: the smallest one any slot can still deliver, once every
    slot has either a packet there or a bound past it."""
    settled = min((slot.next_timestamp() for slot in slots), default=DONE)
    if settled >= DONE:  # (a node without inputs, e.g. a session node, never runs Process)
        return None
    present = [slot for slot in slots if slot.queue and slot.queue[0].timestamp == settled]
    if not present:
        return None
    # An empty slot whose bound is still ``settled`` may yet get a packet there: wait for it
    # (a bound is the lowest timestamp a new packet may carry).
    if any(not slot.queue and slot.next_timestamp() <= settled for slot in slots):
        return None
    return settled, present


class DefaultPolicy:
    """MediaPipe's DefaultInputStreamHandler: every input at the same timestamp."""

    def __init__(self, slots: Sequence[InputSlot]) -> None:
        self._slots = slots

    def select(self) -> Selection | None:
        return _synchronized(self._slots)


class ImmediatePolicy:
    """ImmediateInputStreamHandler: run as soon as any packet arrives, without waiting for
    the other inputs; packets that arrived at one timestamp are delivered together."""

    def __init__(self, slots: Sequence[InputSlot]) -> None:
        self._slots = slots

    def select(self) -> Selection | None:
        waiting = [slot for slot in self._slots if slot.queue]
        if not waiting:
            return None
        earliest = min(slot.queue[0].timestamp for slot in waiting)
        return earliest, [slot for slot in waiting if slot.queue[0].timestamp == earliest]


class SyncSetPolicy:
    """SyncSetInputStreamHandler: each set synchronized on its own, sets independent.

    Inputs named in no set form one more set, as in MediaPipe.
    """

    def __init__(self, slots: Sequence[InputSlot], sets: Sequence[frozenset[str]]) -> None:
        groups = [[slot for slot in slots if slot.tag_index in named] for named in sets]
        named_anywhere = set().union(*sets) if sets else set()
        rest = [slot for slot in slots if slot.tag_index not in named_anywhere]
        self._groups = [group for group in [*groups, rest] if group]

    def select(self) -> Selection | None:
        best: Selection | None = None
        for group in self._groups:
            found = _synchronized(group)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
        return best


POLICIES = {
    "DefaultInputStreamHandler": DefaultPolicy,
    "ImmediateInputStreamHandler": ImmediatePolicy,
    "SyncSetInputStreamHandler": SyncSetPolicy,
}
