"""qwen3coder: XML-like calls, as Qwen3-Coder writes them:

    <tool_call>
    <function=NAME>
    <parameter=P>
    value
    </parameter>
    </function>
    </tool_call>

As OVMS reads them: ``<tool_call>`` may be missing (``<function=`` opens a call too), one newline
right after ``<parameter=P>`` and one right before ``</parameter>`` are not part of the value, the
first of two parameters with the same name wins, and text outside the calls stays content. Values
are typed by the request's tool schema: a declared string (or a parameter the schema does not
declare) is a JSON string, other declared types are parsed (a value that does not parse as its
type stays a string, so the arguments are always valid JSON).

The call is announced at its name; string values stream as they are generated, other values go
out when their ``</parameter>`` arrives.
"""

from __future__ import annotations

import ast
import json
import math

from .json_call import compact_json
from .stream import Context, Handler
from .text_scan import find_tag, leading_whitespace, prefix_state
from .tool_schemas import ANY

_TOOL_OPEN, _TOOL_CLOSE = "<tool_call>", "</tool_call>"
_FUNCTION_OPEN, _FUNCTION_CLOSE = "<function=", "</function>"
_PARAM_OPEN, _PARAM_CLOSE = "<parameter=", "</parameter>"
_IN_TOOL, _FUNCTION_NAME, _IN_FUNCTION, _PARAM_NAME, _VALUE, _AFTER_FUNCTION = range(6)


class Qwen3Coder:
    start_tags = (_TOOL_OPEN, _FUNCTION_OPEN)
    start_prefixes = ()
    content_drops = ()

    def __init__(self, types: dict[str, dict[str, str]]) -> None:
        self.types = types

    def enter(self, opener: str) -> Handler:
        return _Call(self.types, _FUNCTION_NAME if opener == _FUNCTION_OPEN else _IN_TOOL)


class _Call(Handler):
    def __init__(self, types: dict[str, dict[str, str]], state: int) -> None:
        self.types = types
        self.state = state
        self.open = False
        self.params: dict[str, str] = {}
        self.seen: set[str] = set()
        self.kind = "string"
        self.skip = False
        self.leading = True
        self.raw: list[str] = []

    def step(self, ctx: Context, final: bool) -> bool:
        if self.state == _IN_TOOL:
            at, tag = find_tag(ctx.buf, (_FUNCTION_OPEN, _TOOL_CLOSE), final)
            ctx.consume(at)
            if tag == _FUNCTION_OPEN:
                ctx.consume(len(tag))
                self.state = _FUNCTION_NAME
            elif tag == _TOOL_CLOSE:
                ctx.consume(len(tag))
                ctx.resume_content()
            return at > 0 or tag is not None
        if self.state in (_FUNCTION_NAME, _PARAM_NAME):
            end = ctx.buf.find(">")
            if end < 0:
                # A name that never closes: nothing of it can be used.
                if final and ctx.buf:
                    ctx.consume(len(ctx.buf))
                    return True
                return False
            name = ctx.consume(end).strip()
            ctx.consume(1)
            if self.state == _FUNCTION_NAME:
                self._start(ctx, name)
            else:
                self._start_param(ctx, name)
            return True
        if self.state == _IN_FUNCTION:
            tags = (_PARAM_OPEN, _FUNCTION_CLOSE, _TOOL_CLOSE)
            at, tag = find_tag(ctx.buf, tags, final)
            ctx.consume(at)
            if tag is None:
                return at > 0
            ctx.consume(len(tag))
            if tag == _PARAM_OPEN:
                self.state = _PARAM_NAME
                return True
            self._end(ctx)
            if tag == _FUNCTION_CLOSE:
                self.state = _AFTER_FUNCTION
            else:
                ctx.resume_content()
            return True
        if self.state == _VALUE:
            return self._value(ctx, final)
        spaces = leading_whitespace(ctx.buf)
        closing = prefix_state(ctx.buf[spaces:], (_TOOL_CLOSE,))
        if closing == "" and not final:
            return False
        ctx.consume(spaces + len(closing or ""))
        ctx.resume_content()
        return True

    def close(self, ctx: Context) -> None:
        if self.state == _VALUE:
            self._end_param(ctx)
        self._end(ctx)

    def _start(self, ctx: Context, name: str) -> None:
        ctx.start_call(name)
        ctx.emit_args("{")
        self.open = True
        self.params = self.types.get(name, {})
        self.state = _IN_FUNCTION

    def _end(self, ctx: Context) -> None:
        if self.open:
            ctx.emit_args("}")
            self.open = False

    def _start_param(self, ctx: Context, name: str) -> None:
        self.state = _VALUE
        self.leading = True
        self.raw = []
        self.skip = name in self.seen
        if self.skip:
            return
        self.kind = self.params.get(name, "string")
        separator = "," if self.seen else ""
        self.seen.add(name)
        ctx.emit_args(separator + compact_json(name) + ":" + ('"' if self.kind == "string" else ""))

    def _value(self, ctx: Context, final: bool) -> bool:
        if self.leading and (ctx.buf or final):
            self.leading = False
            if ctx.buf.startswith("\n"):
                ctx.consume(1)
                return True
        at, tag = find_tag(ctx.buf, (_PARAM_CLOSE,), final)
        piece = ctx.buf[:at]
        ends = tag is not None or final
        if piece.endswith("\n"):
            if ends:
                piece = piece[:-1]
            else:
                # Perhaps the newline before </parameter>, which is not part of the value.
                at -= 1
                piece = piece[:-1]
        ctx.consume(at)
        if not self.skip and self.kind == "string":
            ctx.emit_args(compact_json(piece)[1:-1])
        else:
            self.raw.append(piece)
        if tag is not None:
            ctx.consume(len(tag))
            self._end_param(ctx)
            self.state = _IN_FUNCTION
            return True
        return at > 0

    def _end_param(self, ctx: Context) -> None:
        if self.skip:
            return
        if self.kind == "string":
            ctx.emit_args('"')
        else:
            ctx.emit_args(typed_value("".join(self.raw), self.kind))
        self.state = _IN_FUNCTION


def typed_value(text: str, kind: str) -> str:
    """The JSON for a parameter value of the declared ``kind``; a JSON string when the text is
    not a value of that kind."""
    stripped = text.strip()
    value = _parse(stripped, python=kind in ("object", "array"))
    if value is not _MISSING and _is_kind(value, kind):
        return compact_json(value)
    if kind == "boolean" and stripped.lower() in ("true", "false"):
        return stripped.lower()
    return compact_json(text)


_PYTHON_TYPES = {"boolean": bool, "object": dict, "array": list, "null": type(None)}


def _is_kind(value: object, kind: str) -> bool:
    if kind == ANY:
        return True
    if kind in ("integer", "number"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    wanted = _PYTHON_TYPES.get(kind)
    return wanted is not None and isinstance(value, wanted)


_MISSING = object()


def _parse(text: str, python: bool) -> object:
    try:
        value = json.loads(text, parse_constant=_reject)
    except (ValueError, RecursionError):
        value = _MISSING
    if value is not _MISSING and _finite(value):
        return value
    if not python:
        return _MISSING
    # Objects and arrays sometimes come in Python's spelling (single quotes, True, None).
    try:
        value = ast.literal_eval(text)
        compact_json(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING
    if isinstance(value, tuple):
        value = list(value)
    return value if _finite(value) else _MISSING


def _reject(constant: str) -> float:
    # NaN and Infinity are not JSON: such a value stays a string.
    raise ValueError(constant)


def _finite(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True
