"""A chat/completions or completions request body, checked field by field as OVMS checks it.

The checks run in OVMS's order and the first failure is the answer (400 with OVMS's message;
COMPAT_GENAI §4.2-4.4). Fields OVMS does not read are ignored, as there (``user``,
``logit_bias``, ``top_logprobs``, ...). Two limits differ on purpose: ``max_tokens`` equal to
the graph's ``max_tokens_limit`` and ``best_of`` equal to ``best_of_limit`` are accepted (OVMS
refuses the limit itself, which its option names do not suggest).

The result names the generation fields as openvino-genai does (generation_config.py applies
OVMS's fix-ups on top of the servable's base settings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RequestLimits:
    """The node's limits on request fields (checked before a request reaches the engine)."""

    best_of_limit: int = 20
    max_tokens_limit: int | None = None


UINT32_MAX = 2**32 - 1
MAX_STOP_STRINGS = 16
# stream_options keys other servers' clients send (guidellm always sends vLLM's
# continuous_usage_stats; the OpenAI API has include_obfuscation): accepted and ignored, where
# OVMS refuses every key but include_usage.
IGNORED_STREAM_OPTIONS = frozenset({"continuous_usage_stats", "include_obfuscation"})
AUDIO_FORMATS = ("wav", "pcm16")
MAX_ASSISTED_TOKENS = 256
CHAT = "chat"
COMPLETIONS = "completions"
RESPONSES = "responses"


class RequestError(Exception):
    """A request field OVMS refuses: HTTP 400 with this message."""


@dataclass
class GenerationRequest:
    endpoint: str
    model: str
    stream: bool = False
    include_usage: bool = False
    config: dict = field(default_factory=dict)
    """openvino-genai GenerationConfig fields the request sets."""
    max_tokens: int | None = None
    n: int = 1
    logprobs: bool = False
    echo: bool = False
    prompt: str | None = None
    """completions: the prompt, tokenized with special tokens."""
    messages: list[dict] | None = None
    """chat: the messages, normalised as OVMS keeps them."""
    tools: list | None = None
    tools_required: bool = False
    """``tool_choice`` is ``required`` or names a function: the answer must call one."""
    chat_template_kwargs: dict = field(default_factory=dict)
    add_generation_prompt: bool = True
    skip_special_tokens: bool = True


def parse_request(body: dict, endpoint: str, limits: RequestLimits) -> GenerationRequest:
    request = GenerationRequest(endpoint=endpoint, model="")
    _common(body, request, limits)
    if endpoint == COMPLETIONS:
        _completions(body, request)
    else:
        _chat(body, request, limits)
    if request.max_tokens is None and limits.max_tokens_limit is not None:
        request.max_tokens = limits.max_tokens_limit
    if request.max_tokens is not None:
        request.config["max_new_tokens"] = request.max_tokens
    return request


# -- value checks ------------------------------------------------------------------------------


def _present(body: dict, name: str) -> bool:
    return body.get(name) is not None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _uint32(value: object, name: str) -> int:
    if _is_int(value) and value > UINT32_MAX:
        raise RequestError(f"{name} value can't be greater than {UINT32_MAX}")
    if not _is_int(value) or value < 0:
        raise RequestError(f"{name} is not an unsigned integer")
    return value


def _number(
    body: dict,
    config: dict,
    name: str,
    low: float | None = None,
    high: float | None = None,
    range_text: str = "",
    high_open: bool = False,
) -> None:
    """A number field, set in ``config`` as a float when present, within [low, high] (or
    [low, high) with ``high_open``) when a range is given."""
    if not _present(body, name):
        return
    value = body[name]
    if not _is_number(value):
        raise RequestError(f"{name} is not a valid number")
    if low is not None and high is not None:
        above = value >= high if high_open else value > high
        if value < low or above:
            raise RequestError(f"{name} {range_text}")
    config[name] = float(value)


def _bool(body: dict, name: str, message: str) -> bool | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise RequestError(message)
    return value


# -- the parts ---------------------------------------------------------------------------------


def _common(body: dict, request: GenerationRequest, limits: RequestLimits) -> None:
    config = request.config
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestError("Stream is not bool")
    request.stream = bool(stream)

    if _present(body, "stream_options"):
        options = body["stream_options"]
        if not request.stream:
            raise RequestError("stream_options provided, but stream not set to true")
        if not isinstance(options, dict):
            raise RequestError("stream_options is not an object")
        for key, value in options.items():
            if key in IGNORED_STREAM_OPTIONS:
                continue
            if key != "include_usage":
                raise RequestError(
                    "Found unexpected stream options. Properties accepted in stream_options: "
                    "include_usage"
                )
            if not isinstance(value, bool):
                raise RequestError("stream_options.include_usage is not a boolean")
            request.include_usage = value

    if "model" not in body:
        raise RequestError("model missing in request")
    if not isinstance(body["model"], str):
        raise RequestError("model is not a string")
    request.model = body["model"]

    ignore_eos = _bool(body, "ignore_eos", "ignore_eos accepts values true or false")
    if ignore_eos is not None:
        config["ignore_eos"] = ignore_eos

    if "max_tokens" in body:
        max_tokens = _uint32(body["max_tokens"], "max_tokens")
        _check_limit(max_tokens, "max_tokens", limits)
        request.max_tokens = max_tokens

    # OVMS's ranges: penalties in [-2, 2], temperature in [0, 2], top_p in [0, 1], min_p in
    # [0, 1); each refusal names the range as OVMS words it.
    _number(body, config, "frequency_penalty", -2.0, 2.0, "out of range(-2.0, 2.0)")
    _number(body, config, "presence_penalty", -2.0, 2.0, "out of range(-2.0, 2.0)")
    _number(body, config, "repetition_penalty")
    if config.get("repetition_penalty", 1.0) <= 0:  # openvino-genai divides by it
        raise RequestError("repetition_penalty must be greater than 0")
    _number(body, config, "length_penalty")
    _number(body, config, "temperature", 0.0, 2.0, "out of range(0.0, 2.0)")
    _number(body, config, "top_p", 0.0, 1.0, "out of range(0.0, 1.0)")
    _number(body, config, "min_p", 0.0, 1.0, "out of range [0.0, 1.0)", high_open=True)
    if _present(body, "top_k"):
        value = body["top_k"]
        if not _is_int(value):
            raise RequestError("top_k is not an integer")
        if value != -1 and value <= 0:
            raise RequestError("top_k must be -1 (all tokens) or a positive integer")
        if value != -1:
            config["top_k"] = value
        else:
            config["top_k"] = 2**64 - 1  # all tokens
    if _present(body, "seed"):
        value = body["seed"]
        if not _is_int(value):
            raise RequestError("seed is not an integer")
        if not 0 <= value <= UINT32_MAX:
            raise RequestError(f"seed out of range [0, {UINT32_MAX}]")
        config["seed"] = value

    if _present(body, "stop"):
        stop = body["stop"]
        if isinstance(stop, str):
            if stop:
                config["stop_strings"] = [stop]
        elif isinstance(stop, list):
            if len(stop) > MAX_STOP_STRINGS:
                raise RequestError(f"stop array must have no more than {MAX_STOP_STRINGS} strings")
            if not all(isinstance(item, str) for item in stop):
                raise RequestError("stop array contains non string element")
            if any(stop):  # an empty string is no stop string
                config["stop_strings"] = [item for item in stop if item]
        else:
            raise RequestError("stop is not a string or array of strings")

    include_stop = _bool(
        body,
        "include_stop_str_in_output",
        "include_stop_str_in_output accepts values true or false",
    )
    if include_stop is False and request.stream:
        raise RequestError("include_stop_str_in_output cannot be set to false if streaming is used")
    config["include_stop_str_in_output"] = request.stream if include_stop is None else include_stop

    best_of = 1
    if _present(body, "best_of"):
        value = body["best_of"]
        if not _is_int(value) or value < 0:
            raise RequestError("best_of is not an unsigned integer")
        if value == 0:
            raise RequestError("best_of value should be greater than 0")
        if value > limits.best_of_limit:
            raise RequestError(
                f"best_of exceeds limit provided in graph config: {limits.best_of_limit}"
            )
        if request.stream:
            raise RequestError("best_of cannot be used in streaming mode")
        best_of = value
        config["best_of"] = value
    if _present(body, "n"):
        value = body["n"]
        if not _is_int(value) or value < 0:
            raise RequestError("n is not an unsigned integer")
        if value == 0:
            raise RequestError("n value should be greater than 0")
        if value > best_of:
            raise RequestError("n value cannot be greater than best_of")
        request.n = value
        config["num_return_sequences"] = value

    if best_of > 1 and config.get("stop_strings"):
        # openvino-genai's beam search breaks its pipeline when a stop string matches.
        raise RequestError("stop cannot be used with best_of greater than 1")

    # Assisted decoding: OVMS reads these without checking their type; ovmsx takes numbers,
    # bounded (each is a count of tokens the engine drafts or matches per step).
    for name in ("num_assistant_tokens", "max_ngram_size"):
        if _is_int(body.get(name)) and body[name] >= 0:
            if body[name] > MAX_ASSISTED_TOKENS:
                raise RequestError(f"{name} must not be greater than {MAX_ASSISTED_TOKENS}")
            config[name] = body[name]
    if _is_number(body.get("assistant_confidence_threshold")):
        config["assistant_confidence_threshold"] = float(body["assistant_confidence_threshold"])

    skip_special = _bool(body, "skip_special_tokens", "skip_special_tokens is not a bool")
    request.skip_special_tokens = skip_special is not False
    _audio_output(body)


def _audio_output(body: dict) -> None:
    """``modalities`` and ``audio`` are checked as OVMS checks them; a text servable then
    answers with text, as there."""
    if _present(body, "modalities"):
        modalities = body["modalities"]
        if not isinstance(modalities, list):
            raise RequestError("modalities is not an array")
        if not all(isinstance(item, str) for item in modalities):
            raise RequestError("modalities array must contain strings")
    if _present(body, "audio"):
        audio = body["audio"]
        if not isinstance(audio, dict):
            raise RequestError("audio is not an object")
        if "format" in audio and audio["format"] not in AUDIO_FORMATS:
            raise RequestError('audio.format must be "wav" or "pcm16"')


def _check_limit(value: int, name: str, limits: RequestLimits) -> None:
    limit = limits.max_tokens_limit
    if limit is not None and value > limit:
        raise RequestError(f"{name} exceeds limit provided in graph config: {limit}")


def _completions(body: dict, request: GenerationRequest) -> None:
    prompt = body.get("prompt")
    if prompt is None or prompt == "":
        raise RequestError("prompt is missing")
    if not isinstance(prompt, str):
        raise RequestError("prompt is not a string")
    request.prompt = prompt
    if _present(body, "logprobs"):
        value = body["logprobs"]
        if not _is_int(value):
            raise RequestError("logprobs accepts integer values")
        if value != 1:
            raise RequestError("accepted logprobs value is currently 1 only")
        if request.stream:
            raise RequestError("logprobs are not supported in streaming mode.")
        request.logprobs = True
        request.config["logprobs"] = 1
    echo = _bool(body, "echo", "echo accepts values true or false")
    request.echo = bool(echo)
    _response_format(body, request)
    if request.max_tokens == 0 and not request.echo:
        raise RequestError("max_tokens value should be greater than 0 unless echo is set")


def _chat(body: dict, request: GenerationRequest, limits: RequestLimits) -> None:
    request.messages = _messages(body)
    logprobs = _bool(body, "logprobs", "logprobs accepts values true or false")
    if logprobs:
        if request.stream:
            raise RequestError("logprobs are not supported in streaming mode.")
        request.logprobs = True
        request.config["logprobs"] = 1
    if _present(body, "max_completion_tokens"):
        value = _uint32(body["max_completion_tokens"], "max_completion_tokens")
        _check_limit(value, "max_completion_tokens", limits)
        request.max_tokens = value
    if request.max_tokens == 0:
        raise RequestError("max_tokens value should be greater than 0")
    _response_format(body, request)
    request.tools = _tools(body)
    choice = body.get("tool_choice")
    request.tools_required = bool(request.tools) and (
        choice == "required" or isinstance(choice, dict)
    )
    if _present(body, "chat_template_kwargs"):
        kwargs = body["chat_template_kwargs"]
        if not isinstance(kwargs, dict):
            raise RequestError("chat_template_kwargs must be an object")
        kwargs = dict(kwargs)
        if "add_generation_prompt" in kwargs:
            value = kwargs.pop("add_generation_prompt")
            if not isinstance(value, bool):
                raise RequestError("add_generation_prompt accepts values true or false")
            request.add_generation_prompt = value
        request.chat_template_kwargs = kwargs


def _response_format(body: dict, request: GenerationRequest) -> None:
    """Chat's ``response_format`` (OVMS reads it there only); completions take it too."""
    if _present(body, "response_format"):
        structured = _structured_output(body["response_format"])
        if structured is not None:
            request.config["structured_output"] = structured


def _messages(body: dict) -> list[dict]:
    if "messages" not in body:
        raise RequestError("Messages missing in request")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise RequestError("Messages are not an array")
    if not messages:
        raise RequestError("Messages array cannot be empty")
    kept = []
    for message in messages:
        if not isinstance(message, dict):
            raise RequestError("Message is not a JSON object")
        if "role" not in message:
            raise RequestError("Every message must have 'role' field")
        kept.append(_message(message))
    return kept


def _message(message: dict) -> dict:
    """The message as its template sees it: OVMS's fields checked and normalised, other
    fields (``recipient``, ``thinking``, ...) kept as sent, for templates that read them."""
    kept = {key: value for key, value in message.items() if key not in _NORMALISED}
    for key in _TEXT_FIELDS:
        if isinstance(message.get(key), str):
            kept[key] = message[key]
    content = message.get("content", "")
    if isinstance(content, list):
        content = _content_parts(content)
    elif content is not None and not isinstance(content, str):
        content = str(content)
    kept["content"] = content
    if "tool_calls" in message and isinstance(message["tool_calls"], list):
        calls = []
        for call in message["tool_calls"]:
            if not isinstance(call, dict):
                raise RequestError("Each tool_call must be an object")
            function = call.get("function")
            if not isinstance(function, dict):
                raise RequestError("Each tool_call must have a 'function' object")
            function = dict(function)
            function.setdefault("arguments", "{}")
            calls.append({**call, "function": function})
        kept["tool_calls"] = calls
    return kept


# OVMS keeps these when they are strings, and normalises content and tool_calls.
_TEXT_FIELDS = ("role", "tool_call_id", "name", "reasoning_content")
_NORMALISED = frozenset({*_TEXT_FIELDS, "content", "tool_calls"})


def _content_parts(parts: list) -> str | None:
    texts = []
    for part in parts:
        if not isinstance(part, dict):
            raise RequestError("Invalid message structure - content array should contain objects")
        kind = part.get("type")
        if kind is None:
            raise RequestError("Invalid message structure - content object type missing")
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise RequestError("Invalid message structure - content text missing")
            texts.append(part["text"])
        elif kind == "image_url":
            image = part.get("image_url")
            if not isinstance(image, dict):
                raise RequestError("Invalid message structure - content image_url missing")
            if "url" not in image:
                raise RequestError("Invalid message structure - image_url does not have url field")
            raise RequestError(
                "This servable supports only text input, but image_url has been provided"
            )
        elif kind == "input_audio":
            audio = part.get("input_audio")
            if not isinstance(audio, dict):
                raise RequestError("Invalid message structure - input_audio object missing")
            raise RequestError(
                "Invalid message structure - input_audio does not have a valid data field"
                if not isinstance(audio.get("data"), str)
                else "This servable supports only text input, but input_audio has been provided"
            )
        else:
            raise RequestError("Unsupported content type")
    return "\n".join(texts) if texts else None


def _structured_output(value) -> dict | None:
    """``response_format`` as openvino-genai ``StructuredOutputConfig`` keyword arguments:
    OpenAI's ``json_object`` and ``json_schema``, OVMS's ``structural_tag``, and (as OVMS takes
    them) XGrammar's other formats wrapped in a structural tag; ``text`` asks for nothing."""
    if not isinstance(value, dict):
        raise RequestError("response_format is not an object")
    kind = value.get("type")
    if not isinstance(kind, str):
        raise RequestError("response_format.type is missing or not a string")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"json_schema": '{"type": "object"}'}
    if kind == "json_schema":
        described = value.get("json_schema")
        if not isinstance(described, dict):
            raise RequestError("response_format.json_schema is not an object")
        schema = described.get("schema", {})
        if not isinstance(schema, dict | bool):
            raise RequestError("response_format.json_schema.schema is not a JSON schema")
        return {"json_schema": json.dumps(schema)}
    tag = value if kind == "structural_tag" else {"type": "structural_tag", "format": value}
    return {"structural_tags_config": json.dumps(tag)}


def _tools(body: dict) -> list | None:
    tool_choice = body.get("tool_choice")
    named = None
    if tool_choice is not None:
        if isinstance(tool_choice, str):
            if tool_choice not in ("none", "auto", "required"):
                raise RequestError("tool_choice should be either 'none' or 'auto' or 'required'")
        elif isinstance(tool_choice, dict):
            function = tool_choice.get("function")
            if function is not None:
                if not isinstance(function, dict):
                    raise RequestError("tool_choice.function is not a valid JSON object")
                named = function.get("name")
                if not isinstance(named, str):
                    raise RequestError("tool_choice.function.name is not a valid string")
            else:
                named = tool_choice.get("name")
                if not isinstance(named, str):
                    raise RequestError("tool_choice.name is not a valid string")
        else:
            raise RequestError("tool_choice is not a valid JSON object or string")
    tools = body.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise RequestError("Tools are not an array")
    kept = []
    for tool in tools:
        if not isinstance(tool, dict):
            raise RequestError("Tool is not a JSON object")
        kind = tool.get("type")
        if not isinstance(kind, str):
            raise RequestError("Tool type is missing or invalid")
        if kind != "function":
            raise RequestError("Only function tools are supported")
        function = tool.get("function", tool)
        if not isinstance(function, dict):
            raise RequestError("Function is not a valid JSON object")
        if not isinstance(function.get("name"), str):
            raise RequestError("Function object does not contain a valid name field")
        if "parameters" in function and not isinstance(function["parameters"], dict):
            raise RequestError("Function parameters are not a valid JSON object")
        if named is None or function["name"] == named:
            kept.append({"type": "function", "function": function})
    if tool_choice == "none":
        return None
    return kept
