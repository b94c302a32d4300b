"""The per-request parser: which formats apply to this request, and its unary and streamed parse."""

from __future__ import annotations

from .devstral import Devstral
from .hermes3 import Hermes3
from .llama3 import Llama3
from .message import ParsedMessage
from .mistral import Mistral
from .names import active_name, check_parser_names
from .phi4 import Phi4
from .qwen3 import Qwen3Reasoning
from .qwen3coder import Qwen3Coder
from .stream import Context, ReasoningFormat, StreamParser, ToolFormat, run
from .tool_schemas import parameter_types

# Parsers whose markers are special tokens: the output must be decoded with special tokens for
# them to find their calls (OVMS decodes those parts with special tokens for the same reason).
SPECIAL_TOKEN_PARSERS: frozenset[str] = frozenset({"llama3", "mistral", "devstral"})


def _tool_format(name: str, tools: list[dict]) -> ToolFormat:
    if name == "qwen3coder":
        return Qwen3Coder(parameter_types(tools))
    formats = {
        "hermes3": Hermes3,
        "llama3": Llama3,
        "mistral": Mistral,
        "phi4": Phi4,
        "devstral": Devstral,
    }
    return formats[name]()


class OutputParser:
    """Parses one request's generated text into content, reasoning and tool calls.

    As in OVMS, tool calls are looked for only when the request gives tools (the wiring passes
    the tools left after ``tool_choice``; none for ``"none"``); reasoning is parsed either way.
    ``prompt_ends_in_reasoning``: the rendered prompt already opened the reasoning
    (``prompt_opens_reasoning``), so the output starts inside it."""

    def __init__(
        self,
        tool_parser: str | None,
        reasoning_parser: str | None,
        tools: list[dict] | None = None,
        prompt_ends_in_reasoning: bool = False,
    ) -> None:
        check_parser_names(tool_parser, reasoning_parser)
        tool = active_name(tool_parser)
        reasoning = active_name(reasoning_parser)
        self._tool_format = _tool_format(tool, tools) if tool and tools else None
        self._reasoning_format: ReasoningFormat | None = Qwen3Reasoning() if reasoning else None
        self._starts_in_reasoning = prompt_ends_in_reasoning

    @property
    def parses_tool_calls(self) -> bool:
        return self._tool_format is not None

    @property
    def parses_reasoning(self) -> bool:
        return self._reasoning_format is not None

    def _context(self) -> Context:
        return Context(self._tool_format, self._reasoning_format, self._starts_in_reasoning)

    def parse(self, text: str) -> ParsedMessage:
        ctx = self._context()
        ctx.buf = text
        run(ctx, final=True)
        return ctx.message()

    def stream(self) -> StreamParser:
        return StreamParser(self._context())
