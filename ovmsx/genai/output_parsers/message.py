"""What a parse produces: tool calls and the OpenAI chat ``message`` they make up."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

_ID_ALPHABET = string.ascii_letters + string.digits
_ID_LENGTH = 9
_random = random.SystemRandom()


def new_call_id() -> str:
    """A tool call id of OVMS's form: nine random letters and digits, no prefix."""
    return "".join(_random.choices(_ID_ALPHABET, k=_ID_LENGTH))


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str
    """The arguments as a JSON text, as OpenAI sends them."""

    def openai(self) -> dict:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass
class ParsedMessage:
    content: str | None
    reasoning_content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)

    def message(self) -> dict:
        """The chat completion's ``message``, keyed in OVMS's order: ``content`` (a string even
        when empty), ``reasoning_content`` only when there is some, ``role``, and ``tool_calls``
        (always present, possibly empty)."""
        body: dict = {"content": self.content}
        if self.reasoning_content:
            body["reasoning_content"] = self.reasoning_content
        body["role"] = "assistant"
        body["tool_calls"] = [call.openai() for call in self.tool_calls]
        return body
