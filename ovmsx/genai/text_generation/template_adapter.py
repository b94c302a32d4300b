"""Messages shaped for the chat template that renders them, as OVMS adapts them first.

Clients send messages in OpenAI's shape; templates are written for Hugging Face's. Before
rendering:

- a tool call's ``arguments``, sent as a JSON string, becomes the object it encodes when the
  template iterates or tests it as a mapping (Qwen3 and Qwen3-VL, Mistral, Gemma, LFM2, MiniCPM
  templates write ``arguments|items``; a string there fails with "Can only get item pairs from
  a mapping");
- ``reasoning_content`` is also given as ``thinking`` when the template reads ``thinking``;
- an assistant turn's ``content: null`` becomes ``""``, and an empty ``tool_calls`` list is
  dropped, since templates test ``content`` as text and ``tool_calls`` for presence.

Other fields of a message (``recipient``, ...) reach the template unchanged.
"""

from __future__ import annotations

import json
import re

_ITERATED_ARGUMENTS = re.compile(r"arguments\s*(?:\|\s*items|\.items\s*\(|is\s+mapping)")
_THINKING = re.compile(r"""(?:\.thinking\b|\[\s*['"]thinking['"]\s*\])""")


class TemplateAdapter:
    def __init__(self, source: str) -> None:
        self._arguments_as_objects = bool(_ITERATED_ARGUMENTS.search(source))
        self._thinking = bool(_THINKING.search(source))

    def adapt(self, messages: list[dict]) -> list[dict]:
        return [self._message(message) for message in messages]

    def _message(self, message: dict) -> dict:
        adapted = dict(message)
        if adapted.get("role") == "assistant" and adapted.get("content") is None:
            adapted["content"] = ""
        calls = adapted.get("tool_calls")
        if isinstance(calls, list) and not calls:
            del adapted["tool_calls"]
        elif isinstance(calls, list) and self._arguments_as_objects:
            adapted["tool_calls"] = [_with_object_arguments(call) for call in calls]
        reasoning = adapted.get("reasoning_content")
        if self._thinking and isinstance(reasoning, str) and "thinking" not in adapted:
            adapted["thinking"] = reasoning
        return adapted


def _with_object_arguments(call: dict) -> dict:
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
        return call
    try:
        arguments = json.loads(function["arguments"])
    except ValueError:
        return call  # not JSON: the template gets the text as sent
    if not isinstance(arguments, dict):
        return call
    return {**call, "function": {**function, "arguments": arguments}}
