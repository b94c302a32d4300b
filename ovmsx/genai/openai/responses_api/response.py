"""The Response object, whole (a unary answer) and as the streamed events carry it.

Its fields come in OVMS's order: ``id`` (``resp-<created_at>``), ``object``, ``created_at``,
``completed_at`` (only when completed), ``incomplete_details`` (only when incomplete, OVMS's
reason ``max_tokens``), ``error`` (null, or ``{code, message}`` when failed), ``model``, ``status``,
``parallel_tool_calls``, ``store``, ``temperature`` (when given), ``text`` (plain text),
``tool_choice``, ``tools``, ``top_p`` (when given), ``truncation`` (disabled), ``metadata``
(empty), ``max_output_tokens`` (when set), then ``output`` and ``usage``.

A unary answer lists, per choice, a reasoning item when there is reasoning, a function call
item per tool call, and the message item when there is text or nothing else (OVMS's newer
builds leave an empty message out after tool calls, and so do its streams).
"""

from __future__ import annotations

import time

from .events import ResponseEventStream
from .items import (
    COMPLETED,
    INCOMPLETE,
    function_call_item,
    message_item,
    reasoning_item,
    usage_object,
)

LENGTH = "length"
# OVMS's reason for an answer cut by the token limit. OpenAI's reference (and the openai
# package's strict types) name it "max_output_tokens"; the openai client itself reads either.
INCOMPLETE_REASON = "max_tokens"


class ResponseBuilder:
    def __init__(self, model: str, echo: dict, created: int | None = None) -> None:
        self.model = model
        self.echo = echo
        self.created = int(time.time()) if created is None else int(created)
        self.id = f"resp-{self.created}"

    def whole(self, message: dict, finish_reason: str, usage: dict) -> dict:
        """The Response of one chat ``message`` (``content``, optional ``reasoning_content`` and
        ``tool_calls``) ended by ``finish_reason``; ``usage`` has ``prompt_tokens`` and
        ``completion_tokens``."""
        return self.whole_choices([(message, finish_reason)], usage)

    def whole_choices(self, choices: list[tuple[dict, str]], usage: dict) -> dict:
        """As ``whole`` for several choices (``n`` > 1): incomplete when any ran out of tokens."""
        incomplete = any(reason == LENGTH for _, reason in choices)
        status = INCOMPLETE if incomplete else COMPLETED
        output: list[dict] = []
        for index, (message, _) in enumerate(choices):
            output += choice_items(message, index, status)
        return self.response(status, output, usage)

    def stream(self) -> ResponseEventStream:
        return ResponseEventStream(self)

    def response(
        self, status: str, output: list[dict], usage: dict | None, error: dict | None = None
    ) -> dict:
        """The Response object with this status and output; ``usage`` None leaves it out."""
        echo = self.echo
        body: dict = {"id": self.id, "object": "response", "created_at": self.created}
        if status == COMPLETED:
            body["completed_at"] = max(int(time.time()), self.created)
        if status == INCOMPLETE:
            body["incomplete_details"] = {"reason": INCOMPLETE_REASON}
        body["error"] = error
        body["model"] = self.model
        body["status"] = status
        body["parallel_tool_calls"] = echo.get("parallel_tool_calls", True)
        body["store"] = echo.get("store", True)
        if "temperature" in echo:
            body["temperature"] = echo["temperature"]
        body["text"] = {"format": {"type": "text"}}
        body["tool_choice"] = echo.get("tool_choice", "none")
        body["tools"] = echo.get("tools", [])
        if "top_p" in echo:
            body["top_p"] = echo["top_p"]
        body["truncation"] = "disabled"
        body["metadata"] = {}
        for name in ("max_output_tokens", "instructions", "reasoning"):
            if name in echo:
                body[name] = echo[name]
        body["output"] = output
        if usage is not None:
            body["usage"] = usage_object(usage)
        return body


def choice_items(message: dict, index: int, status: str) -> list[dict]:
    items: list[dict] = []
    reasoning = message.get("reasoning_content")
    if reasoning:
        items.append(reasoning_item(f"rs-{index}", reasoning))
    calls = message.get("tool_calls") or []
    for call in calls:
        function = call.get("function") or {}
        items.append(
            function_call_item(
                call.get("id") or "",
                function.get("name") or "",
                function.get("arguments") or "",
                status,
            )
        )
    content = message.get("content") or ""
    if content or not calls:
        items.append(message_item(f"msg-{index}", content, status))
    return items
