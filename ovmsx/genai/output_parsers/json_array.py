"""A JSON array of call objects after a start tag, as mistral and phi4 write their calls.

Calls are announced one by one as the array streams. Elements that are not valid calls are
dropped; so is whatever follows the array, except a new start tag, which opens another array.
"""

from __future__ import annotations

from collections.abc import Sequence

from .json_call import CallReader, step_call
from .stream import Context, Handler
from .text_scan import find_tag, leading_whitespace

_OPEN, _ELEMENT, _CALL, _SEPARATOR, _AFTER = range(5)


class JsonArrayCalls(Handler):
    def __init__(self, tag: str, terminators: Sequence[str]) -> None:
        self.tag = tag
        self.terminators = tuple(terminators)
        self.state = _OPEN
        self.reader: CallReader | None = None

    def step(self, ctx: Context, final: bool) -> bool:
        if self.state == _CALL:
            return step_call(self, ctx, final, _SEPARATOR)
        if self.state == _AFTER:
            at, tag = find_tag(ctx.buf, (self.tag,), final)
            ctx.consume(at)
            if tag is None:
                return at > 0
            ctx.consume(len(tag))
            self.state = _OPEN
            return True
        spaces = leading_whitespace(ctx.buf)
        if spaces:
            ctx.consume(spaces)
            return True
        if not ctx.buf:
            return False
        c = ctx.buf[0]
        opens_element = c == "[" if self.state == _OPEN else c == ","
        if c == "{":
            # A bare object where the array should open is taken as a one-call array.
            self.reader = CallReader(("arguments",), self.terminators)
            self.state = _CALL
        elif opens_element:
            ctx.consume(1)
            self.state = _ELEMENT
        elif self.state != _OPEN and c == "]":
            ctx.consume(1)
            self.state = _AFTER
        else:
            self.state = _AFTER
        return True

    def close(self, ctx: Context) -> None:
        if self.reader is not None:
            self.reader.step(ctx, final=True)
