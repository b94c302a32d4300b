"""Which output parsers an LLM servable runs, and the parser of one chat request.

A graph's ``tool_parser`` and ``reasoning_parser`` are checked when it loads (an unknown name,
or one ovmsx does not implement, is OVMS's load error); each one left unset is picked from the
chat template as OVMS picks it (output_parsers.detect_parsers). A parser detected but not
implemented by ovmsx leaves the servable without it, with a warning: the user asked for nothing.
Calls are looked for only in chat requests that give tools (those ``tool_choice`` leaves);
reasoning in every chat request.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ovmsx.genai.output_parsers import (
    IMPLEMENTED_REASONING_PARSERS,
    IMPLEMENTED_TOOL_PARSERS,
    SPECIAL_TOKEN_PARSERS,
    OutputParser,
    ParserNameError,
    check_parser_names,
    prompt_opens_reasoning,
    resolve_parsers,
)
from ovmsx.status import StatusCode, status_error

log = logging.getLogger("ovmsx.llm_calculator")
_NOT_IMPLEMENTED = (
    "node %s: the chat template calls for the %s parser %s, which ovmsx does not implement "
    "yet: %s stay in the text"
)


@dataclass(frozen=True)
class Parsers:
    tool: str | None = None
    reasoning: str | None = None

    def for_request(self, tools: list | None, prompt: str) -> OutputParser | None:
        if self.reasoning is None and (self.tool is None or not tools):
            return None
        return OutputParser(self.tool, self.reasoning, tools, prompt_opens_reasoning(prompt))

    def keeps_special_tokens(self, tools: list | None) -> bool:
        """Whether the parser reads tags the tokenizer calls special (e.g. ``[TOOL_CALLS]``):
        then the request's text is decoded with them."""
        return bool(tools) and self.tool in SPECIAL_TOKEN_PARSERS


def parser_options(options, node: str) -> tuple[str | None, str | None]:
    """The graph's ``tool_parser`` and ``reasoning_parser`` (None: unset), checked."""
    tool = options.tool_parser if options.HasField("tool_parser") else None
    reasoning = options.reasoning_parser if options.HasField("reasoning_parser") else None
    try:
        check_parser_names(tool, reasoning)
    except ParserNameError as error:
        raise status_error(
            StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED, f"node {node}: {error}"
        ) from None
    return tool, reasoning


def servable_parsers(given: tuple[str | None, str | None], template: str | None, node: str):
    """The parsers the servable runs: the graph's, else the ones its template calls for."""
    tool, reasoning = resolve_parsers(given[0], given[1], template)
    if tool is not None and tool not in IMPLEMENTED_TOOL_PARSERS:
        log.warning(_NOT_IMPLEMENTED, node, "tool", tool, "tool calls")
        tool = None
    if reasoning is not None and reasoning not in IMPLEMENTED_REASONING_PARSERS:
        log.warning(_NOT_IMPLEMENTED, node, "reasoning", reasoning, "reasoning")
        reasoning = None
    if tool or reasoning:
        log.info("node %s: tool parser %s, reasoning parser %s", node, tool, reasoning)
    return Parsers(tool, reasoning)
