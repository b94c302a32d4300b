"""OVMS-compatible output parsers: tool calls and reasoning out of an LLM's generated text.

OVMS names its parsers per model family (``tool_parser``, ``reasoning_parser`` in the graph, or
``--tool_parser``/``--reasoning_parser``) and, when they are not given, picks them from the chat
template's source (``detect_parsers``). ``OutputParser`` turns one request's output into an
OpenAI ``message`` (``parse``) or, while it is generated, into chunk ``delta`` objects
(``stream``); both give the same content, reasoning and calls for the same text, however it is
split.
"""

from __future__ import annotations

from .detect import detect_parsers, resolve_parsers
from .message import ParsedMessage, ToolCall, new_call_id
from .names import (
    IMPLEMENTED_REASONING_PARSERS,
    IMPLEMENTED_TOOL_PARSERS,
    REASONING_PARSERS,
    TOOL_PARSERS,
    ParserNameError,
    check_parser_names,
)
from .output_parser import SPECIAL_TOKEN_PARSERS, OutputParser
from .qwen3 import prompt_opens_reasoning
from .stream import StreamParser

__all__ = [
    "IMPLEMENTED_REASONING_PARSERS",
    "IMPLEMENTED_TOOL_PARSERS",
    "REASONING_PARSERS",
    "SPECIAL_TOKEN_PARSERS",
    "TOOL_PARSERS",
    "OutputParser",
    "ParsedMessage",
    "ParserNameError",
    "StreamParser",
    "ToolCall",
    "check_parser_names",
    "detect_parsers",
    "new_call_id",
    "prompt_opens_reasoning",
    "resolve_parsers",
]
