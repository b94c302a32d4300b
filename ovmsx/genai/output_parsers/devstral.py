"""devstral: ``[TOOL_CALLS]NAME[ARGS]{...}`` (Devstral, and Mistral templates with ``[ARGS]``),
one call after another; ``</s>`` ends the output.

As OVMS reads it: the content is what precedes ``[TOOL_CALLS]``, the name is what lies between
the tags with the whitespace around it trimmed, the arguments are the generated text as it is
(``{}`` when there is none), and ``[TOOL_CALLS]`` not followed by a name and ``[ARGS]`` is no
call: the text after it stays content. Both tags are special tokens, so the output must be
decoded with special tokens for this parser to see them.
"""

from __future__ import annotations

import re

from .stream import Context, Handler
from .text_scan import find_tag

_CALLS, _ARGS, _END = "[TOOL_CALLS]", "[ARGS]", "</s>"
# What OVMS trims off the name (C's isspace).
_SPACES = " \t\n\r\f\v"
# A name as far as it has come, with whitespace only around it: anything else is no call.
_NAME_SO_FAR = re.compile(rf"[{_SPACES}]*[A-Za-z0-9_.-]*[{_SPACES}]*")
_NAME, _ARGUMENTS = range(2)


class Devstral:
    start_tags = (_CALLS,)
    start_prefixes = ()
    content_drops = (_END,)

    def enter(self, opener: str) -> Handler:
        return _Calls()


class _Calls(Handler):
    def __init__(self) -> None:
        self.state = _NAME
        self.written = False

    def step(self, ctx: Context, final: bool) -> bool:
        if self.state == _NAME:
            at, tag = find_tag(ctx.buf, (_ARGS,), final)
            well_formed = _NAME_SO_FAR.fullmatch(ctx.buf, 0, at) is not None
            name = ctx.buf[:at].strip(_SPACES)
            if tag is not None and name and well_formed:
                ctx.consume(at + len(tag))
                ctx.start_call(name)
                self.state, self.written = _ARGUMENTS, False
                return True
            if tag is not None or final or not well_formed:
                ctx.resume_content()
                return True
            return False
        at, tag = find_tag(ctx.buf, (_END, _CALLS), final)
        piece = ctx.consume(at)
        ctx.emit_args(piece)
        self.written = self.written or bool(piece)
        if tag is None:
            return at > 0
        ctx.consume(len(tag))
        self._end(ctx)
        if tag == _CALLS:
            self.state = _NAME
        else:
            ctx.resume_content()
        return True

    def close(self, ctx: Context) -> None:
        if self.state == _ARGUMENTS:
            self._end(ctx)

    def _end(self, ctx: Context) -> None:
        if not self.written:
            ctx.emit_args("{}")
        self.written = True
