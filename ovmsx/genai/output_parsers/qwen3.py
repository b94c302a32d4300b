"""qwen3 reasoning: ``<think>...</think>`` before the answer (Qwen3 and other thinking models).

The reasoning is the text between the tags as generated (no trimming, as in OVMS); text before
``<think>`` and after ``</think>`` is content. When the prompt already ends with ``<think>``
(templates that open the reasoning for the model) the output is reasoning from its first
character, up to ``</think>``. Reasoning that never closes (the output was cut short) is reasoning
to the end.
"""

from __future__ import annotations

from .stream import ContentHandler, Context, Handler
from .text_scan import find_tag, prefix_state

_OPEN, _CLOSE = "<think>", "</think>"


class Qwen3Reasoning:
    start_tag = _OPEN

    def enter(self, implicit: bool) -> Handler:
        return _Thinking(implicit)


def prompt_opens_reasoning(prompt: str) -> bool:
    """Whether a rendered prompt leaves the model inside reasoning (OVMS's test: the prompt,
    trimmed, ends with the start tag)."""
    return prompt.rstrip().endswith(_OPEN)


class _Thinking(Handler):
    def __init__(self, implicit: bool) -> None:
        # A model may still write the <think> its prompt already opened.
        self.opening = implicit

    def step(self, ctx: Context, final: bool) -> bool:
        if self.opening:
            tag = prefix_state(ctx.buf, (_OPEN,))
            if tag == "" and not final:
                return False
            self.opening = False
            if tag:
                ctx.consume(len(tag))
            return True
        at, tag = find_tag(ctx.buf, (_CLOSE,), final)
        ctx.emit_reasoning(ctx.consume(at))
        if tag is None:
            return at > 0
        ctx.consume(len(tag))
        ctx.switch(ContentHandler(at_start=True))
        return True
