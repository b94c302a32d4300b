"""A ``POST /v3/responses`` body as the equivalent ``/v3/chat/completions`` body, checked in
OVMS's order with OVMS's messages.

OVMS runs a Responses request through the same LLM graph as chat: it checks the fields common
to every endpoint first (stream, model, sampling; ``max_tokens`` is not read), then its own:
``stream_options`` (refused: usage always comes with the last event), ``instructions`` (a
system message before the input), ``input`` (input_items.py), ``parallel_tool_calls``,
``store``, ``reasoning`` (any ``effort`` sets ``enable_thinking: true`` in the chat template's
kwargs unless they set it already; ``summary`` is ignored), ``logprobs`` (checked, not
answered), ``tool_choice`` and ``tools`` (the flat Responses form or the chat form; a flat tool
of another type, such as ``web_search_preview``, is refused; a chat-form tool of another type
is skipped), ``max_output_tokens`` (the chat parser's ``max_completion_tokens``).

The common fields are checked by the chat parser itself (openai_request.py), on those fields
alone, so that their errors come first and word the same as for chat. One common check is
Responses' own: ``n`` above 1 cannot be streamed (the stream has one output index). OVMS makes it
among ``n``'s checks, after the fields before ``n`` and before ``n`` is compared with
``best_of``. ``text.format`` other than plain text becomes the chat ``response_format``, so that
it is refused (or honoured) as there rather than ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ovmsx.genai.openai.openai_request import (
    CHAT,
    UINT32_MAX,
    RequestError,
    RequestLimits,
    parse_request,
)

from .errors import ResponsesRequestError
from .input_items import input_messages

# Fields every endpoint reads, passed to the chat body as they are. In OVMS's order: a
# streamed n above 1 is refused after the fields before n are checked (_common).
SAMPLING_FIELDS = (
    "ignore_eos",
    "frequency_penalty",
    "presence_penalty",
    "repetition_penalty",
    "length_penalty",
    "temperature",
    "top_p",
    "min_p",
    "top_k",
    "seed",
    "stop",
    "include_stop_str_in_output",
    "best_of",
    "n",
    "num_assistant_tokens",
    "max_ngram_size",
    "assistant_confidence_threshold",
    "skip_special_tokens",
)
EFFORTS = ("low", "medium", "high")
REASONING_SUMMARIES = ("auto", "concise", "detailed")
_PROBE_MESSAGES = [{"role": "user", "content": "-"}]


@dataclass
class ChatEquivalent:
    chat_body: dict
    """A /v3/chat/completions body for ``openai_request.parse_request(..., CHAT, limits)``."""
    stream: bool
    request_echo: dict = field(default_factory=dict)
    """What the Response object repeats of the request (ResponseBuilder's ``echo``)."""


def translate_request(body: dict, limits: RequestLimits | None = None) -> ChatEquivalent:
    """Raises ``ResponsesRequestError`` with OVMS's message. ``limits`` (the graph's) adds the
    ``max_output_tokens`` limit check and, when the request sets none, the echoed default."""
    if not isinstance(body, dict):
        raise ResponsesRequestError("Received json is not an object")
    limits = limits or RequestLimits()
    stream = _stream(body)
    _common(body, limits)

    if "stream_options" in body:
        raise ResponsesRequestError("stream_options is not supported in Responses API.")
    messages = _instructions(body) + input_messages(body)
    parallel = _flag(body, "parallel_tool_calls")
    store = _flag(body, "store")
    kwargs = _template_kwargs(body)
    logprobs = body.get("logprobs")
    if logprobs is not None:
        if not isinstance(logprobs, bool):
            raise ResponsesRequestError("logprobs accepts values true or false")
        if logprobs and stream:
            raise ResponsesRequestError("logprobs are not supported in streaming mode.")
    choice, tools, schemas = _tools(body)
    max_output_tokens = _max_output_tokens(body, limits)
    response_format = _response_format(body)

    chat: dict = {"model": body["model"]}
    if "stream" in body:
        chat["stream"] = body["stream"]
    chat["messages"] = messages
    for name in SAMPLING_FIELDS:
        if name in body:
            chat[name] = body[name]
    if max_output_tokens is not None:
        chat["max_completion_tokens"] = max_output_tokens
    if tools is not None:
        chat["tools"] = tools
    chat["tool_choice"] = _chat_tool_choice(choice)
    if kwargs is not None:
        chat["chat_template_kwargs"] = kwargs
    if response_format is not None:
        chat["response_format"] = response_format

    echo = _echo(body, limits, parallel, store, choice, schemas, max_output_tokens)
    return ChatEquivalent(chat_body=chat, stream=stream, request_echo=echo)


# -- the common part -----------------------------------------------------------------------


def _stream(body: dict) -> bool:
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise ResponsesRequestError("Stream is not bool")
    options = body.get("stream_options")
    if options is not None:
        # Checked as for every endpoint first; refused for Responses afterwards.
        if stream is not True:
            raise ResponsesRequestError("stream_options provided, but stream not set to true")
        if not isinstance(options, dict):
            raise ResponsesRequestError("stream_options is not an object")
        if "include_usage" in options and not isinstance(options["include_usage"], bool):
            raise ResponsesRequestError("stream_options.include_usage is not a boolean")
        if any(key != "include_usage" for key in options):
            raise ResponsesRequestError(
                "Found unexpected stream options. Properties accepted in stream_options: "
                "include_usage"
            )
    return bool(stream)


def _common(body: dict, limits: RequestLimits) -> None:
    """The fields common to all endpoints, checked by the chat parser on those fields alone.

    A streamed ``n`` above 1 is refused where OVMS refuses it: once ``n`` is known to be a
    positive integer, so the fields before it are checked first and those after it are not."""
    n = body.get("n")
    streamed_n = body.get("stream") is True and _is_int(n) and n > 1
    fields = SAMPLING_FIELDS[: SAMPLING_FIELDS.index("n")] if streamed_n else SAMPLING_FIELDS
    probe = {name: body[name] for name in ("stream", "model", *fields) if name in body}
    probe["messages"] = _PROBE_MESSAGES
    try:
        parse_request(probe, CHAT, limits)
    except RequestError as error:
        raise ResponsesRequestError(str(error)) from None
    if streamed_n:
        raise ResponsesRequestError("n greater than 1 is not supported for Responses API streaming")


# -- the Responses part --------------------------------------------------------------------


def _instructions(body: dict) -> list[dict]:
    instructions = body.get("instructions")
    if instructions is None:
        return []
    if not isinstance(instructions, str):
        raise ResponsesRequestError("instructions is not a string")
    return [{"role": "system", "content": instructions}]


def _flag(body: dict, name: str) -> bool:
    value = body.get(name)
    if value is None:
        return True
    if not isinstance(value, bool):
        raise ResponsesRequestError(f"{name} is not a boolean")
    return value


def _template_kwargs(body: dict) -> object:
    """The chat template kwargs, with ``enable_thinking`` when a reasoning effort is given."""
    kwargs = body.get("chat_template_kwargs")
    reasoning = body.get("reasoning")
    if reasoning is None:
        return kwargs
    if not isinstance(reasoning, dict):
        raise ResponsesRequestError("reasoning is not an object")
    effort = reasoning.get("effort")
    if effort is None:
        return kwargs
    if not isinstance(effort, str):
        raise ResponsesRequestError("reasoning.effort is not a string")
    if effort not in EFFORTS:
        raise ResponsesRequestError("reasoning.effort must be one of: low, medium, high")
    if kwargs is None:
        return {"enable_thinking": True}
    if isinstance(kwargs, dict):
        return {**kwargs, "enable_thinking": kwargs.get("enable_thinking", True)}
    return kwargs  # not an object: the chat parser refuses it


def _tools(body: dict) -> tuple[str, list | None, dict[str, dict]]:
    """The tool choice (``none``, ``auto``, ``required`` or a function name), the tools in the
    chat form (None when there are none to pass) and the kept tools' parameter schemas."""
    choice = _tool_choice(body.get("tool_choice"))
    tools = body.get("tools")
    if choice == "none" or tools is None:
        return "none", None, {}
    if not isinstance(tools, list):
        raise ResponsesRequestError("Tools are not an array")
    kept: list[dict] = []
    schemas: dict[str, dict] = {}
    for tool in tools:
        if not isinstance(tool, dict):
            raise ResponsesRequestError("Tool is not a JSON object")
        function = _function(tool)
        if function is None:
            continue  # a chat-form tool of another type: skipped, as OVMS does
        name = function["name"]
        if choice not in ("auto", "required") and name != choice:
            continue
        if "parameters" in function:
            if not isinstance(function["parameters"], dict):
                raise ResponsesRequestError("Function parameters are not a valid JSON object")
            schemas[name] = function["parameters"]
        kept.append({"type": "function", "function": function})
    return choice, kept, schemas


def _tool_choice(value: object) -> str:
    if value is None:
        return "auto"
    if isinstance(value, str):
        if value not in ("none", "auto", "required"):
            raise ResponsesRequestError(
                "tool_choice should be either 'none' or 'auto' or 'required'"
            )
        return value
    if not isinstance(value, dict):
        raise ResponsesRequestError("tool_choice is not a valid JSON object or string")
    function = value.get("function")
    if isinstance(function, dict):
        name = function.get("name")
        if not isinstance(name, str):
            raise ResponsesRequestError("tool_choice.function.name is not a valid string")
        return name
    if value.get("type") != "function":
        raise ResponsesRequestError("tool_choice.function is not a valid JSON object")
    name = value.get("name")
    if not isinstance(name, str):
        raise ResponsesRequestError("tool_choice.name is not a valid string")
    return name


def _function(tool: dict) -> dict | None:
    """The chat form's ``function`` object of a function tool; None for a chat-form tool of
    another type (skipped), a refusal for a flat one."""
    kind = tool.get("type")
    if "function" in tool:
        if isinstance(kind, str) and kind != "function":
            return None
        function = tool["function"]
        if not isinstance(function, dict):
            raise ResponsesRequestError("Function is not a valid JSON object")
    else:
        if not isinstance(kind, str):
            raise ResponsesRequestError("Tool type is missing or invalid")
        if kind != "function":
            # Built-in tools (web_search_preview, file_search, ...) need OpenAI's servers.
            raise ResponsesRequestError("Only function tools are supported")
        function = {key: value for key, value in tool.items() if key not in ("type", "response")}
    if not isinstance(function.get("name"), str):
        raise ResponsesRequestError("Function object does not contain a valid name field")
    return function


def _chat_tool_choice(choice: str) -> object:
    if choice in ("none", "auto", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _max_output_tokens(body: dict, limits: RequestLimits) -> int | None:
    value = body.get("max_output_tokens")
    if value is None:
        return None
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if is_int and value > UINT32_MAX:
        raise ResponsesRequestError(f"max_output_tokens value can't be greater than {UINT32_MAX}")
    if not is_int or value < 0:
        raise ResponsesRequestError("max_output_tokens is not an unsigned integer")
    limit = limits.max_tokens_limit
    if limit is not None and value > limit:
        raise ResponsesRequestError(
            f"max_output_tokens exceeds limit provided in graph config: {limit}"
        )
    if value == 0:
        raise ResponsesRequestError("max_output_tokens value should be greater than 0")
    return value


def _response_format(body: dict) -> object:
    """``response_format`` as given (the chat parser checks it), else a structured
    ``text.format`` in the chat API's shape."""
    if body.get("response_format") is not None:
        return body["response_format"]
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if fmt.get("type") == "json_schema":
        schema = {key: value for key, value in fmt.items() if key != "type"}
        return {"type": "json_schema", "json_schema": schema}
    return dict(fmt)


# -- what the Response repeats -------------------------------------------------------------


def _echo(
    body: dict,
    limits: RequestLimits,
    parallel: bool,
    store: bool,
    choice: str,
    schemas: dict[str, dict],
    max_output_tokens: int | None,
) -> dict:
    """In OVMS's order: the tool choice as it was resolved (``none`` without tools, a named
    function as ``{"type": "function", "name": ...}``), the kept tools that have parameters
    sorted by name (OVMS lists them from a name-ordered map), temperature and top_p only when
    given, max_output_tokens when given or limited by the graph. ``instructions`` and
    ``reasoning`` are not OVMS's (it leaves them out); they are OpenAI's and cost nothing."""
    echo: dict = {"parallel_tool_calls": parallel, "store": store}
    if _is_number(body.get("temperature")):
        echo["temperature"] = float(body["temperature"])
    if choice in ("none", "auto", "required"):
        echo["tool_choice"] = choice
    else:
        echo["tool_choice"] = {"type": "function", "name": choice}
    echo["tools"] = [
        {"type": "function", "name": name, "parameters": schemas[name]} for name in sorted(schemas)
    ]
    if _is_number(body.get("top_p")):
        echo["top_p"] = float(body["top_p"])
    if max_output_tokens is None:
        max_output_tokens = limits.max_tokens_limit
    if max_output_tokens is not None:
        echo["max_output_tokens"] = max_output_tokens
    if isinstance(body.get("instructions"), str):
        echo["instructions"] = body["instructions"]
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        summary = reasoning.get("summary")
        echo["reasoning"] = {
            "effort": reasoning.get("effort"),
            "summary": summary if summary in REASONING_SUMMARIES else None,
        }
    return echo


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
