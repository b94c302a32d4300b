"""phi4: ``functools[{"name": ..., "arguments": {...}}, ...]`` (Phi-4-mini).

The content is what precedes ``functools``; the calls follow it as a JSON array.
"""

from __future__ import annotations

from .json_array import JsonArrayCalls
from .stream import Handler

_TAG = "functools"


class Phi4:
    start_tags = (_TAG,)
    start_prefixes = ()
    content_drops = ()

    def enter(self, opener: str) -> Handler:
        # Phi-4's end-of-turn token, when decoded, ends a call that never closed.
        return JsonArrayCalls(_TAG, ("<|end|>",))
