"""phi4: ``functools[{"name": ..., "arguments": {...}}, ...]`` (Phi-4-mini).

As OVMS reads it: the content is what precedes the first ``functools``; all that follows it must
be one JSON array to give calls (``json_array``), so a second ``functools`` block, or text after
the array, gives none. Either way that part is not content.
"""

from __future__ import annotations

from .json_array import HeldRegion, array_calls, emit_calls
from .stream import Context, Handler

_TAG = "functools"


class Phi4:
    start_tags = (_TAG,)
    start_prefixes = ()
    content_drops = ()

    def enter(self, opener: str) -> Handler:
        return HeldRegion(_settle)


def _settle(ctx: Context, text: str) -> None:
    emit_calls(ctx, array_calls(text) or [])
