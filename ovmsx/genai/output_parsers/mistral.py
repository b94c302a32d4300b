"""mistral: ``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` (Mistral 7B v0.3, Nemo).

As OVMS reads it: only an output that starts with ``[TOOL_CALLS]`` (its first token), or with
``[{`` when the tag was not decoded, can be calls, and then the whole of it must be one JSON array
once the special tokens are taken out (``json_array``). Otherwise, a ``[TOOL_CALLS]`` later in
the text included, the output is content. OVMS decodes that content without special tokens, so
``[TOOL_CALLS]`` and the end-of-sequence ``</s>`` are not part of it.
"""

from __future__ import annotations

import re

from .json_array import HeldRegion, array_calls, emit_calls
from .stream import Context, Handler

_TAG, _EOS = "[TOOL_CALLS]", "</s>"
_BARE_START = "[{"
# The text is decoded with special tokens for the tag's sake, so the model's end-of-turn token
# (``<|im_end|>`` and the like, when it is not ``</s>``) may follow the array; OVMS's decode
# leaves it out.
_END_OF_TURN = re.compile(r"(?:<\|[^|\s]+\|>\s*)+\Z")


class Mistral:
    start_tags = ()
    start_prefixes = (_TAG, _BARE_START)
    content_drops = (_TAG, _EOS)

    def enter(self, opener: str) -> Handler:
        return HeldRegion(_settle)


def _settle(ctx: Context, text: str) -> None:
    plain = text.replace(_TAG, "").replace(_EOS, "")
    # The prefix was found after any leading whitespace; OVMS wants it at the very start.
    at_start = text.startswith((_TAG, _BARE_START))
    calls = array_calls(_END_OF_TURN.sub("", plain)) if at_start else None
    if calls is None:
        ctx.emit_content(plain)
    else:
        emit_calls(ctx, calls)
