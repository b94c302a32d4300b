"""hermes3: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, one call per block
(Hermes 3, Qwen 2.5 and Qwen 3 write this).

As OVMS does: the content is what precedes the first ``<tool_call>``; after it only further blocks
count, and any other text (between or after the blocks) is dropped, as is a block that does not
hold a valid call. The closing tag may be missing at the end of the output.
"""

from __future__ import annotations

from .json_call import CallReader, step_call
from .stream import Context, Handler
from .text_scan import find_tag, leading_whitespace

_OPEN = "<tool_call>"
_CLOSE = "</tool_call>"
_BODY, _CALL, _BETWEEN = range(3)


class Hermes3:
    start_tags = (_OPEN,)
    start_prefixes = ()
    content_drops = ()

    def enter(self, opener: str) -> Handler:
        return _Blocks()


class _Blocks(Handler):
    def __init__(self) -> None:
        self.state = _BODY
        self.reader: CallReader | None = None

    def step(self, ctx: Context, final: bool) -> bool:
        if self.state == _CALL:
            return step_call(self, ctx, final, _BETWEEN)
        if self.state == _BODY:
            spaces = leading_whitespace(ctx.buf)
            if spaces:
                ctx.consume(spaces)
                return True
            if not ctx.buf:
                return False
            if ctx.buf[0] == "{":
                # A missing end tag must not swallow the next block.
                self.reader = CallReader(("arguments",), (_CLOSE, _OPEN))
                self.state = _CALL
            else:
                self.state = _BETWEEN
            return True
        at, tag = find_tag(ctx.buf, (_OPEN,), final)
        ctx.consume(at)
        if tag is None:
            return at > 0
        ctx.consume(len(tag))
        self.state = _BODY
        return True

    def close(self, ctx: Context) -> None:
        if self.reader is not None:
            self.reader.step(ctx, final=True)
