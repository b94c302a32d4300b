"""A tool call written as a JSON object, ``{"name": ..., "arguments": {...}}``, read as it streams.

When the object opens with its name and then its arguments object (the order every model family
here writes), the call is announced as soon as the arguments begin, and the arguments stream out
with the whitespace between JSON tokens dropped and raw control characters inside strings escaped
(so they stay valid JSON, as OVMS's re-serialisation of parsed arguments is). Any other shape is
read whole and kept only if it parses to an object with a string ``name`` and an object of
arguments, which is the check OVMS applies to every call; the rest is dropped, as OVMS drops it.

Once announced a call stays, even if the text stops inside its arguments (the stream has already
sent it): its arguments are then what was generated. The brace that closes the arguments is held
back until the call object closes too: OVMS ends the arguments before the last ``}`` of the call,
so when the model forgets the object's own brace, the arguments' brace is taken for it and is
not part of the arguments.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .stream import Context
from .text_scan import WHITESPACE, find_tag

MORE, PROGRESS, DONE = range(3)
_HEADER, _ARGS, _TAIL, _WHOLE = range(4)
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def match_header(text: str, keys: Sequence[str]) -> tuple[str, int, str]:
    """Match ``{"name": "<string>", "<key>": {`` at the start of ``text``.

    Returns ``("match", end, name)`` with ``end`` just past the arguments' opening brace,
    ``("partial", 0, "")`` while ``text`` could still become such a start, else
    ``("fail", 0, "")``."""
    pos = 0
    name = ""
    for want in ("{", '"name"', ":", "string", ",", "key", ":", "{"):
        while pos < len(text) and text[pos] in WHITESPACE:
            pos += 1
        rest = text[pos:]
        if not rest:
            return "partial", 0, ""
        if want == "string":
            end = _string_end(text, pos)
            if end is None:
                return "partial", 0, ""
            if end < 0:
                return "fail", 0, ""
            name = json.loads(text[pos:end])
            pos = end
            continue
        options = [f'"{key}"' for key in keys] if want == "key" else [want]
        hit = next((o for o in options if rest.startswith(o)), None)
        if hit is None:
            if any(o.startswith(rest) for o in options):
                return "partial", 0, ""
            return "fail", 0, ""
        pos += len(hit)
    return "match", pos, name


def _string_end(text: str, pos: int) -> int | None:
    """Index past the JSON string starting at ``pos``; None if unfinished, -1 if not a string."""
    if text[pos] != '"':
        return -1
    i = pos + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            try:
                json.loads(text[pos : i + 1])
            except ValueError:
                return -1
            return i + 1
        i += 1
    return None


class _Depth:
    """Tracks strings and nesting over JSON text fed in pieces."""

    __slots__ = ("depth", "escaped", "in_string")

    def __init__(self, depth: int = 0) -> None:
        self.depth = depth
        self.in_string = False
        self.escaped = False

    def closes_at(self, text: str) -> int:
        """Feed ``text``; the index just past the character that brings the depth to 0, or -1."""
        for i, c in enumerate(text):
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif c == "\\":
                    self.escaped = True
                elif c == '"':
                    self.in_string = False
            elif c == '"':
                self.in_string = True
            elif c in "{[":
                self.depth += 1
            elif c in "}]":
                self.depth -= 1
                if self.depth == 0:
                    return i + 1
        return -1


def step_call(handler, ctx, final: bool, after) -> bool:
    """Steps ``handler.reader``, the call being read; once it is done the handler moves to
    state ``after``. Returns whether anything moved (a handler's ``step`` result)."""
    verdict = handler.reader.step(ctx, final)
    if verdict == DONE:
        handler.state, handler.reader = after, None
        return True
    return verdict == PROGRESS


class CallReader:
    """Reads one call object from ``ctx.buf``, which starts at its ``{``.

    ``keys`` are the accepted names of the arguments member. ``terminators`` end the call
    wherever they appear, even inside its arguments (the region's end tag, say, after a model
    forgot a brace); the reader stops before them and leaves them to its caller."""

    def __init__(self, keys: Sequence[str], terminators: Sequence[str]) -> None:
        self.keys = tuple(keys)
        self.terminators = tuple(terminators)
        self.state = _HEADER
        self.depth = _Depth()
        self.whole: list[str] = []
        self.held = ""

    def step(self, ctx: Context, final: bool) -> int:
        limit, cut = self._visible(ctx.buf, final)
        text = ctx.buf[:limit]
        ended = cut or final
        if self.state == _HEADER:
            verdict, end, name = match_header(text, self.keys)
            if verdict == "match":
                ctx.start_call(name)
                ctx.emit_args("{")
                ctx.consume(end)
                self.state, self.depth = _ARGS, _Depth(depth=1)
                return PROGRESS
            if verdict == "partial" and not ended:
                return MORE
            self.state = _WHOLE
            return PROGRESS
        if self.state == _ARGS:
            return self._arguments(ctx, text, ended)
        if self.state == _TAIL:
            closed = self.depth.closes_at(text)
            ctx.consume(limit if closed < 0 else closed)
            if closed >= 0:
                ctx.emit_args(self.held)
                return DONE
            if ended:
                return DONE
            return PROGRESS if limit else MORE
        closed = self.depth.closes_at(text)
        self.whole.append(ctx.consume(limit if closed < 0 else closed))
        if closed >= 0 or ended:
            self._parse_whole(ctx)
            return DONE
        return PROGRESS if limit else MORE

    def _visible(self, buf: str, final: bool) -> tuple[int, bool]:
        at, tag = find_tag(buf, self.terminators, final)
        return at, tag is not None

    def _arguments(self, ctx: Context, text: str, ended: bool) -> int:
        out: list[str] = []
        state = self.depth
        used = 0
        closed = False
        for c in text:
            used += 1
            if state.in_string:
                if state.escaped:
                    state.escaped = False
                    out.append(c)
                elif c == "\\":
                    state.escaped = True
                    out.append(c)
                elif c == '"':
                    state.in_string = False
                    out.append(c)
                elif c < " ":
                    out.append(_ESCAPES.get(c) or f"\\u{ord(c):04x}")
                else:
                    out.append(c)
                continue
            if c in WHITESPACE:
                continue
            out.append(c)
            if c == '"':
                state.in_string = True
            elif c in "{[":
                state.depth += 1
            elif c in "}]":
                state.depth -= 1
                if state.depth == 0:
                    closed = True
                    self.held = out.pop()
                    break
        ctx.emit_args("".join(out))
        ctx.consume(used)
        if closed:
            # The call object itself is still open: skip whatever follows its arguments.
            self.state, self.depth = _TAIL, _Depth(depth=1)
            return PROGRESS
        if ended:
            return DONE
        return PROGRESS if used else MORE

    def _parse_whole(self, ctx: Context) -> None:
        try:
            call = json.loads("".join(self.whole), strict=False)
        except ValueError:
            return
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return
        arguments = next((call[k] for k in self.keys if k in call), None)
        if not isinstance(arguments, dict):
            return
        ctx.start_call(call["name"])
        ctx.emit_args(compact_json(arguments))
