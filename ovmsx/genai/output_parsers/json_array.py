"""A JSON array of call objects, as mistral and phi4 write their calls, read as OVMS reads it:
all or nothing.

OVMS parses the whole text after the start as one JSON document. Only an array gives calls: its
elements with a string ``name`` and an object of ``arguments`` (others are dropped). Anything
else (text after the array, a second start tag, an array cut short) gives no call at all. That
is known only when the output ends, so the region is held back until then and goes out at the
end, in the stream as in the unary parse.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from .json_call import compact_json
from .stream import Context, Handler


class HeldRegion(Handler):
    """Holds the rest of the output and, once it has all come, hands it to ``settle``."""

    def __init__(self, settle: Callable[[Context, str], None]) -> None:
        self.settle = settle

    def step(self, ctx: Context, final: bool) -> bool:
        if final:
            self.settle(ctx, ctx.consume(len(ctx.buf)))
        return False


def array_calls(text: str) -> list[tuple[str, str]] | None:
    """``(name, arguments JSON)`` of each valid call when ``text`` is one JSON array (whitespace
    around it allowed), else None."""
    try:
        value = json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, list):
        return None
    return [
        (element["name"], compact_json(element["arguments"]))
        for element in value
        if isinstance(element, dict)
        and isinstance(element.get("name"), str)
        and isinstance(element.get("arguments"), dict)
    ]


def emit_calls(ctx: Context, calls: list[tuple[str, str]]) -> None:
    for name, arguments in calls:
        ctx.start_call(name)
        ctx.emit_args(arguments)


def _not_json(constant: str) -> float:
    # Python reads NaN and Infinity; the JSON parser OVMS uses does not.
    raise ValueError(constant)
