"""mistral: ``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` (Mistral 7B v0.3, Nemo).

``[TOOL_CALLS]`` is a special token, seen only when special tokens are decoded, so, as OVMS does,
an output that starts with ``[{`` is taken for calls too. The content is what precedes the calls;
a decoded end-of-sequence token ``</s>`` is not content.
"""

from __future__ import annotations

from .json_array import JsonArrayCalls
from .stream import Handler

_TAG = "[TOOL_CALLS]"


class Mistral:
    start_tags = (_TAG,)
    start_prefixes = ("[{",)
    content_drops = ("</s>",)

    def enter(self, opener: str) -> Handler:
        # The end-of-sequence token, when decoded, ends a call that never closed.
        return JsonArrayCalls(_TAG, ("</s>", _TAG))
