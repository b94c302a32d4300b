"""llama3: JSON calls after ``<|python_tag|>``, or a whole output that starts with ``{``; several
calls are separated by ``;``. The arguments member is ``parameters`` (Llama 3.1/3.2's own
templates) or ``arguments``, both accepted as OVMS accepts them.

The content is what precedes ``<|python_tag|>``; everything after it belongs to the calls, and text
that is not a valid call is dropped, as in OVMS. ``<|python_tag|>`` is a special token: it reaches
the parser only when the output is decoded with special tokens, otherwise only the leading-``{``
form is recognised.
"""

from __future__ import annotations

from .json_call import CallReader, step_call
from .stream import Context, Handler
from .text_scan import find_tag, leading_whitespace

_TAG = "<|python_tag|>"
# End-of-turn tokens, when special tokens are decoded: neither content nor part of a call.
_END_OF_TURN = ("<|eom_id|>", "<|eot_id|>")
_MARKERS = (_TAG, *_END_OF_TURN)
_SEEK, _CALL, _SKIP = range(3)


class Llama3:
    start_tags = (_TAG,)
    start_prefixes = ("{",)
    content_drops = _END_OF_TURN

    def enter(self, opener: str) -> Handler:
        return _Calls()


class _Calls(Handler):
    def __init__(self) -> None:
        self.state = _SEEK
        self.reader: CallReader | None = None

    def step(self, ctx: Context, final: bool) -> bool:
        if self.state == _CALL:
            return step_call(self, ctx, final, _SEEK)
        if self.state == _SKIP:
            at, tag = find_tag(ctx.buf, (";", _TAG), final)
            ctx.consume(at)
            if tag is None:
                return at > 0
            ctx.consume(len(tag))
            self.state = _SEEK
            return True
        spaces = leading_whitespace(ctx.buf)
        if spaces:
            ctx.consume(spaces)
            return True
        if not ctx.buf:
            return False
        if ctx.buf[0] == "{":
            self.reader = CallReader(("parameters", "arguments"), _MARKERS)
            self.state = _CALL
            return True
        if ctx.buf[0] == ";":
            ctx.consume(1)
            return True
        self.state = _SKIP
        return True

    def close(self, ctx: Context) -> None:
        if self.reader is not None:
            self.reader.step(ctx, final=True)
