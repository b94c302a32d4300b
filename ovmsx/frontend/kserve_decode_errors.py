"""Why protobuf refused a request: the byte and the rule, for a client's error message.

protobuf's Python parser says only "Error parsing message with type ..." for the failures the
core's wire reader (csrc/core/protobuf_wire.h) does not look for: a field number 0, a string
field that is not UTF-8 (proto3 requires it), a group, a broken nested message. This walk runs
only after a parse has failed; it follows the message's descriptor through nested messages
and names the first such fault as the core does: "malformed message at byte N: <what>".
"""

from __future__ import annotations

from google.protobuf.descriptor import Descriptor, FieldDescriptor

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
_FIXED_SIZES = {
    FieldDescriptor.TYPE_FIXED32: 4,
    FieldDescriptor.TYPE_SFIXED32: 4,
    FieldDescriptor.TYPE_FLOAT: 4,
    FieldDescriptor.TYPE_FIXED64: 8,
    FieldDescriptor.TYPE_SFIXED64: 8,
    FieldDescriptor.TYPE_DOUBLE: 8,
}
# Fields walked before giving up: the walk must stay cheap next to the request it explains.
_BUDGET = 1_000_000


class _Fault(Exception):
    def __init__(self, position: int, what: str) -> None:
        super().__init__(f"malformed message at byte {position}: {what}")


class _OutOfBudget(Exception):
    pass


def explain(message: bytes | memoryview, descriptor: Descriptor) -> str | None:
    """The first fault in ``message`` read as ``descriptor``, or None when none is found."""
    view = memoryview(message).cast("B")
    try:
        _Walk(view).message(0, len(view), descriptor)
    except _Fault as fault:
        return str(fault)
    except _OutOfBudget:
        return None
    return None


class _Walk:
    def __init__(self, view: memoryview) -> None:
        self.view = view
        self.budget = _BUDGET

    def varint(self, position: int, end: int) -> tuple[int, int]:
        value = 0
        for shift in range(0, 70, 7):
            if position >= end:
                raise _Fault(position, "truncated varint")
            byte = self.view[position]
            position += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value, position
        raise _Fault(position, "varint longer than 10 bytes")

    def skip(self, position: int, size: int, end: int) -> int:
        if size > end - position:
            raise _Fault(position, "field runs past the end of the message")
        return position + size

    def message(self, position: int, end: int, descriptor: Descriptor) -> None:
        while position < end:
            self.budget -= 1
            if self.budget < 0:
                raise _OutOfBudget
            start = position
            key, position = self.varint(position, end)
            number, wire_type = key >> 3, key & 7
            if number == 0:
                raise _Fault(start, "field number 0")
            if wire_type == _VARINT:
                _, position = self.varint(position, end)
            elif wire_type == _FIXED64:
                position = self.skip(position, 8, end)
            elif wire_type == _FIXED32:
                position = self.skip(position, 4, end)
            elif wire_type == _LEN:
                size, position = self.varint(position, end)
                payload_end = self.skip(position, size, end)
                field = descriptor.fields_by_number.get(number)
                if field is not None:
                    self.payload(position, payload_end, field, descriptor)
                position = payload_end
            else:
                raise _Fault(start, f"unsupported wire type {wire_type}")

    def payload(self, position: int, end: int, field: FieldDescriptor, owner: Descriptor) -> None:
        """The value of a length-delimited ``field``: a string, a message or packed scalars."""
        if field.type == FieldDescriptor.TYPE_STRING:
            try:
                bytes(self.view[position:end]).decode("utf-8")
            except UnicodeDecodeError:
                raise _Fault(position, f"{owner.name}.{field.name} is not valid UTF-8") from None
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            self.message(position, end, field.message_type)
        elif field.type in _FIXED_SIZES:
            if (end - position) % _FIXED_SIZES[field.type]:
                raise _Fault(position, f"packed {owner.name}.{field.name} has a partial value")
        elif field.type != FieldDescriptor.TYPE_BYTES:
            while position < end:  # packed varints
                self.budget -= 1
                if self.budget < 0:
                    raise _OutOfBudget
                _, position = self.varint(position, end)
