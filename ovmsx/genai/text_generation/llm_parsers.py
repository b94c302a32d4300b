"""Which output parsers an LLM servable runs, and the parser of one chat request.

A graph's ``tool_parser`` and ``reasoning_parser`` are checked when it loads (an unknown name,
or one ovmsx does not implement, is OVMS's load error); each one left unset is picked from the
chat template as OVMS picks it (output_parsers.detect_parsers). A parser detected but not
implemented by ovmsx leaves the servable without it, with a warning: the user asked for nothing.
Calls are looked for only in chat requests that give tools (those ``tool_choice`` leaves);
reasoning in every chat request.

Tool-guided generation (the graph's ``enable_tool_guided_generation``, or a request whose
``tool_choice`` requires a call) constrains a hermes3 call to the tools' schemas with a
structural tag, as OVMS's hermes3 builder does: free text until ``<tool_call>``, then the name
of one of the tools and arguments that follow its parameters (a call is forced first when one
is required). Only hermes3 calls are guided: for other parsers the option is refused at load.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from ovmsx.genai.output_parsers import (
    IMPLEMENTED_REASONING_PARSERS,
    IMPLEMENTED_TOOL_PARSERS,
    SPECIAL_TOKEN_PARSERS,
    OutputParser,
    ParserNameError,
    StreamParser,
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


GUIDED_PARSER = "hermes3"


@dataclass(frozen=True)
class Parsers:
    tool: str | None = None
    reasoning: str | None = None
    guided: bool = False
    """``enable_tool_guided_generation``."""

    def guidance(self, tools: list | None, required: bool) -> dict | None:
        """The structured output that guides a hermes3 call (None: no guidance)."""
        if self.tool != GUIDED_PARSER or not tools or not (self.guided or required):
            return None
        tags = [
            {
                "type": "tag",
                "begin": f'<tool_call>\n{{"name": {json.dumps(function["name"])}, "arguments": ',
                "content": {"type": "json_schema", "json_schema": function.get("parameters", {})},
                "end": "}\n</tool_call>",
            }
            for function in (tool["function"] for tool in tools)
        ]
        format_ = {
            "type": "triggered_tags",
            "triggers": ["<tool_call>"],
            "tags": tags,
            "at_least_one": required,
            "stop_after_first": False,
        }
        return {"structural_tags_config": json.dumps({"type": "structural_tag", "format": format_})}

    def for_request(self, tools: list | None, prompt: str) -> OutputParser | None:
        if self.reasoning is None and (self.tool is None or not tools):
            return None
        return OutputParser(self.tool, self.reasoning, tools, prompt_opens_reasoning(prompt))

    def keeps_special_tokens(self, tools: list | None) -> bool:
        """Whether the parser reads tags the tokenizer calls special (e.g. ``[TOOL_CALLS]``):
        then the request's text is decoded with them."""
        return bool(tools) and self.tool in SPECIAL_TOKEN_PARSERS


def parser_options(options, node: str) -> tuple[str | None, str | None, bool]:
    """The graph's ``tool_parser`` and ``reasoning_parser`` (None: unset), checked, and its
    ``enable_tool_guided_generation``."""
    tool = options.tool_parser if options.HasField("tool_parser") else None
    reasoning = options.reasoning_parser if options.HasField("reasoning_parser") else None
    try:
        check_parser_names(tool, reasoning)
    except ParserNameError as error:
        raise status_error(
            StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED, f"node {node}: {error}"
        ) from None
    return tool, reasoning, options.enable_tool_guided_generation


def servable_parsers(given: tuple[str | None, str | None, bool], template: str | None, node: str):
    """The parsers the servable runs: the graph's, else the ones its template calls for."""
    tool, reasoning = resolve_parsers(given[0], given[1], template)
    guided = given[2]
    if tool is not None and tool not in IMPLEMENTED_TOOL_PARSERS:
        log.warning(_NOT_IMPLEMENTED, node, "tool", tool, "tool calls")
        tool = None
    if reasoning is not None and reasoning not in IMPLEMENTED_REASONING_PARSERS:
        log.warning(_NOT_IMPLEMENTED, node, "reasoning", reasoning, "reasoning")
        reasoning = None
    if guided and tool != GUIDED_PARSER:
        raise status_error(
            StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED,
            f"node {node}: enable_tool_guided_generation: ovmsx guides {GUIDED_PARSER} tool "
            f"calls only, and this servable's tool parser is {tool or 'none'}",
        )
    if tool or reasoning:
        log.info("node %s: tool parser %s, reasoning parser %s", node, tool, reasoning)
    return Parsers(tool, reasoning, guided)


def parsed_message(parser: OutputParser | None, text: str, reason: str) -> tuple[dict, str]:
    """A whole answer's chat ``message`` and finish reason: with a parser, its content,
    reasoning and calls, and ``tool_calls`` for an answer that called where it says ``stop``."""
    if parser is None:
        return {"content": text, "role": "assistant", "tool_calls": []}, reason
    parsed = parser.parse(text)
    if parsed.tool_calls and reason == "stop":
        reason = "tool_calls"
    return parsed.message(), reason


def parsed_deltas(
    stream: StreamParser | None, text: str, reason: str | None
) -> tuple[list[dict], str | None]:
    """The chat ``delta`` objects for a new piece of a streamed answer, and its finish reason
    (given with the last piece; ``tool_calls`` as in ``parsed_message``)."""
    if stream is None:
        return ([{"content": text}] if text else []), reason
    deltas = stream.feed(text) if text else []
    if reason is not None:
        deltas += stream.finish()
        if stream.tool_calls_seen and reason == "stop":
            reason = "tool_calls"
    return deltas, reason
