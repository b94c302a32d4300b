"""The Responses API translation (ovmsx/genai/openai/responses_api), without a server:
requests turned into chat requests the chat parser accepts, OVMS's refusals word for word, and
Response objects and event streams checked against the openai package's own types and its
streaming client."""

from __future__ import annotations

import json

import httpx
import openai
import orjson
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from ovmsx.genai.openai.openai_request import CHAT, RequestError, RequestLimits, parse_request
from ovmsx.genai.openai.responses_api import (
    DONE,
    ChatEquivalent,
    ResponseBuilder,
    ResponsesRequestError,
    translate_request,
)

CREATED = 1_700_000_000
USAGE = {"prompt_tokens": 11, "completion_tokens": 7}
EVENTS = TypeAdapter(ResponseStreamEvent)
WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def translated(body: dict, limits: RequestLimits | None = None) -> ChatEquivalent:
    """The translation, and the chat parser's reading of its chat body."""
    equivalent = translate_request({"model": "m", **body}, limits)
    parse_request(equivalent.chat_body, CHAT, limits or RequestLimits())
    return equivalent


def chat_messages(body: dict) -> list[dict]:
    equivalent = translate_request({"model": "m", **body})
    return parse_request(equivalent.chat_body, CHAT, RequestLimits()).messages


# -- request translation ---------------------------------------------------------------------


def test_a_string_input_is_one_user_message() -> None:
    equivalent = translated({"input": "What is OpenVINO?"})
    assert equivalent.chat_body == {
        "model": "m",
        "messages": [{"role": "user", "content": "What is OpenVINO?"}],
        "tool_choice": "none",
    }
    assert equivalent.stream is False
    assert equivalent.request_echo == {
        "parallel_tool_calls": True,
        "store": True,
        "tool_choice": "none",
        "tools": [],
    }


def test_instructions_become_the_first_system_message() -> None:
    messages = chat_messages(
        {"instructions": "Answer briefly.", "input": [{"role": "user", "content": "Hi"}]}
    )
    assert messages == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Hi"},
    ]


def test_message_items_with_string_and_part_content() -> None:
    messages = chat_messages(
        {
            "input": [
                {"role": "developer", "content": "Be exact."},
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "First line"},
                        {"type": "input_text", "text": "second line"},
                    ],
                },
                {
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Noted.", "annotations": []}],
                },
                {"role": "user", "content": "Go on"},
            ]
        }
    )
    assert messages == [
        {"role": "system", "content": "Be exact."},
        {"role": "user", "content": "First line\nsecond line"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Go on"},
    ]


def test_function_calls_and_their_outputs_become_tool_calls_and_tool_messages() -> None:
    call = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    messages = chat_messages(
        {
            "input": [
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"type": "function_call", "id": "abc", "call_id": "abc", **call},
                {
                    "type": "function_call",
                    "call_id": "def",
                    "name": "get_weather",
                    "arguments": '{"city": "Rome"}',
                },
                {"type": "function_call_output", "call_id": "abc", "output": "18C"},
                {"type": "function_call_output", "call_id": "def", "output": "24C"},
            ]
        }
    )
    assert messages == [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "abc", "type": "function", "function": call},
                {
                    "id": "def",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "abc", "content": "18C"},
        {"role": "tool", "tool_call_id": "def", "content": "24C"},
    ]


def test_a_previous_response_output_can_be_sent_back_as_input() -> None:
    """What the openai client sends for a second turn: the first response's output items
    (reasoning, a call) followed by the call's output."""
    first = ResponseBuilder("m", {}, created=CREATED).whole(
        {
            "content": "",
            "reasoning_content": "Need the weather.",
            "tool_calls": [
                {
                    "id": "abc",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        "tool_calls",
        USAGE,
    )
    second_input = [
        {"role": "user", "content": "Weather in Paris?"},
        *first["output"],
        {"type": "function_call_output", "call_id": "abc", "output": "18C"},
    ]
    messages = chat_messages({"input": second_input})
    assert messages == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "reasoning_content": "Need the weather.",
            "content": None,
            "tool_calls": [
                {
                    "id": "abc",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "abc", "content": "18C"},
    ]


def test_reasoning_with_no_assistant_turn_after_it_is_an_assistant_turn_of_its_own() -> None:
    messages = chat_messages(
        {
            "input": [
                {
                    "type": "reasoning",
                    "id": "rs-0",
                    "summary": [{"type": "summary_text", "text": "Hm"}],
                },
                {"role": "user", "content": "And?"},
            ]
        }
    )
    assert messages == [
        {"role": "assistant", "reasoning_content": "Hm", "content": ""},
        {"role": "user", "content": "And?"},
    ]


def test_images_and_audio_reach_the_chat_parser_which_refuses_them_for_text_models() -> None:
    image = {
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is on the picture?"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
                ],
            }
        ]
    }
    equivalent = translate_request({"model": "m", **image})
    assert equivalent.chat_body["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,AAAA"},
    }
    with pytest.raises(RequestError, match="supports only text input, but image_url"):
        parse_request(equivalent.chat_body, CHAT, RequestLimits())
    audio = {
        "input": [
            {
                "role": "user",
                "content": [{"type": "input_audio", "input_audio": {"data": "UklGRg=="}}],
            }
        ]
    }
    equivalent = translate_request({"model": "m", **audio})
    assert equivalent.chat_body["messages"][0]["content"][0] == {
        "type": "input_audio",
        "input_audio": {"data": "UklGRg==", "format": "wav"},
    }
    with pytest.raises(RequestError, match="supports only text input, but input_audio"):
        parse_request(equivalent.chat_body, CHAT, RequestLimits())


def test_flat_function_tools_become_chat_tools_and_are_echoed() -> None:
    tools = [
        {"type": "function", "name": "zeta", "description": "Z", "parameters": WEATHER},
        {"type": "function", "name": "alpha", "parameters": {"type": "object"}, "strict": True},
        {"type": "function", "name": "bare"},
        {"type": "function", "function": {"name": "nested", "parameters": {"type": "object"}}},
    ]
    equivalent = translated({"input": "hi", "tools": tools})
    assert equivalent.chat_body["tools"] == [
        {
            "type": "function",
            "function": {"name": "zeta", "description": "Z", "parameters": WEATHER},
        },
        {
            "type": "function",
            "function": {"name": "alpha", "parameters": {"type": "object"}, "strict": True},
        },
        {"type": "function", "function": {"name": "bare"}},
        {"type": "function", "function": {"name": "nested", "parameters": {"type": "object"}}},
    ]
    assert equivalent.chat_body["tool_choice"] == "auto"
    # OVMS echoes the tools with parameters, ordered by name.
    assert equivalent.request_echo["tools"] == [
        {"type": "function", "name": "alpha", "parameters": {"type": "object"}},
        {"type": "function", "name": "nested", "parameters": {"type": "object"}},
        {"type": "function", "name": "zeta", "parameters": WEATHER},
    ]
    assert equivalent.request_echo["tool_choice"] == "auto"


@pytest.mark.parametrize(
    "tool_choice",
    [
        {"type": "function", "name": "zeta"},
        {"type": "function", "function": {"name": "zeta"}},
    ],
)
def test_a_named_tool_choice_keeps_that_tool_alone(tool_choice: dict) -> None:
    tools = [
        {"type": "function", "name": "alpha", "parameters": {"type": "object"}},
        {"type": "function", "name": "zeta", "parameters": WEATHER},
    ]
    equivalent = translated({"input": "hi", "tools": tools, "tool_choice": tool_choice})
    assert equivalent.chat_body["tools"] == [
        {"type": "function", "function": {"name": "zeta", "parameters": WEATHER}}
    ]
    assert equivalent.chat_body["tool_choice"] == {
        "type": "function",
        "function": {"name": "zeta"},
    }
    assert equivalent.request_echo["tool_choice"] == {"type": "function", "name": "zeta"}
    assert [tool["name"] for tool in equivalent.request_echo["tools"]] == ["zeta"]


def test_tool_choice_none_drops_the_tools_unchecked() -> None:
    equivalent = translated({"input": "hi", "tools": [5], "tool_choice": "none"})
    assert "tools" not in equivalent.chat_body
    assert equivalent.chat_body["tool_choice"] == "none"
    assert equivalent.request_echo["tool_choice"] == "none"
    assert equivalent.request_echo["tools"] == []


def test_any_reasoning_effort_enables_thinking() -> None:
    for effort in ("low", "medium", "high"):
        equivalent = translated({"input": "hi", "reasoning": {"effort": effort}})
        assert equivalent.chat_body["chat_template_kwargs"] == {"enable_thinking": True}
        assert equivalent.request_echo["reasoning"] == {"effort": effort, "summary": None}
    merged = translated(
        {"input": "hi", "reasoning": {"effort": "low"}, "chat_template_kwargs": {"x": 1}}
    )
    assert merged.chat_body["chat_template_kwargs"] == {"x": 1, "enable_thinking": True}
    kept = translated(
        {
            "input": "hi",
            "reasoning": {"effort": "high", "summary": "auto"},
            "chat_template_kwargs": {"enable_thinking": False},
        }
    )
    assert kept.chat_body["chat_template_kwargs"] == {"enable_thinking": False}
    assert kept.request_echo["reasoning"] == {"effort": "high", "summary": "auto"}
    no_effort = translated({"input": "hi", "reasoning": {"summary": "auto"}})
    assert "chat_template_kwargs" not in no_effort.chat_body


def test_sampling_fields_and_max_output_tokens_reach_the_chat_request() -> None:
    body = {
        "input": "hi",
        "stream": True,
        "temperature": 0.5,
        "top_p": 1,
        "top_k": 5,
        "seed": 7,
        "stop": ["\n"],
        "repetition_penalty": 1.1,
        "frequency_penalty": 0.2,
        "presence_penalty": 0.3,
        "min_p": 0.05,
        "ignore_eos": False,
        "max_output_tokens": 32,
        "max_tokens": 3,  # not read by OVMS's Responses parser
        "skip_special_tokens": True,
    }
    equivalent = translated(body)
    chat = equivalent.chat_body
    assert equivalent.stream is True
    assert chat["stream"] is True
    assert chat["max_completion_tokens"] == 32
    assert "max_tokens" not in chat
    for name in ("temperature", "top_p", "top_k", "seed", "stop", "min_p", "ignore_eos"):
        assert chat[name] == body[name]
    request = parse_request(chat, CHAT, RequestLimits())
    assert request.max_tokens == 32
    assert request.config["temperature"] == 0.5
    assert request.config["seed"] == 7
    echo = equivalent.request_echo
    assert (echo["temperature"], echo["top_p"], echo["max_output_tokens"]) == (0.5, 1.0, 32)


def test_the_graph_limit_is_the_echoed_max_output_tokens_by_default() -> None:
    limits = RequestLimits(max_tokens_limit=100)
    assert translated({"input": "hi"}, limits).request_echo["max_output_tokens"] == 100
    assert (
        translated({"input": "hi", "max_output_tokens": 100}, limits).chat_body[
            "max_completion_tokens"
        ]
        == 100
    )
    with pytest.raises(
        ResponsesRequestError,
        match=r"^max_output_tokens exceeds limit provided in graph config: 100$",
    ):
        translate_request({"model": "m", "input": "hi", "max_output_tokens": 101}, limits)


def test_parallel_tool_calls_and_store_are_echoed() -> None:
    echo = translated({"input": "hi", "parallel_tool_calls": False, "store": False}).request_echo
    assert (echo["parallel_tool_calls"], echo["store"]) == (False, False)


def test_a_structured_text_format_is_passed_on_as_response_format() -> None:
    text = {"format": {"type": "json_schema", "name": "answer", "schema": WEATHER}}
    equivalent = translate_request({"model": "m", "input": "hi", "text": text})
    assert equivalent.chat_body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": WEATHER},
    }
    plain = translated({"input": "hi", "text": {"format": {"type": "text"}}})
    assert "response_format" not in plain.chat_body


ABSENT = object()
INPUT_ERRORS = [
    ({"input": ABSENT}, "input missing in request"),
    ({"input": ""}, "input cannot be empty"),
    ({"input": 5}, "input is not a string or array"),
    ({"input": None}, "input is not a string or array"),
    ({"input": []}, "Messages array cannot be empty"),
    ({"input": ["hi"]}, "input array items must be objects"),
    ({"input": [{"content": "hi"}]}, "input item role is missing or invalid"),
    ({"input": [{"role": 1, "content": "hi"}]}, "input item role is missing or invalid"),
    ({"input": [{"role": "user"}]}, "input item is missing required content field"),
    ({"input": [{"role": "user", "content": 5}]}, "input item content must be a string or array"),
    ({"input": [{"role": "user", "content": []}]}, "input item content array must not be empty"),
    ({"input": [{"role": "user", "content": ["hi"]}]}, "input content items must be objects"),
    (
        {"input": [{"role": "user", "content": [{"text": "hi"}]}]},
        "input content item type is missing or invalid",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_text"}]}]},
        "input_text requires a valid text field",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_image"}]}]},
        "input_image requires image_url field",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": {}}]}]},
        "input_image.image_url.url is missing or invalid",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": 5}]}]},
        "input_image.image_url must be a string or object",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_audio"}]}]},
        "input_audio requires input_audio object field",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]},
        "input_audio.data is missing or invalid",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "refusal", "refusal": "no"}]}]},
        "unsupported input content item type: refusal",
    ),
    (
        {"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
        "function_call item is missing required call_id (or id) field",
    ),
    (
        {
            "input": [
                {"type": "function_call", "call_id": "", "id": "a", "name": "f", "arguments": ""}
            ]
        },
        "function_call item is missing required call_id (or id) field",
    ),
    (
        {"input": [{"type": "function_call", "call_id": "a", "arguments": "{}"}]},
        "function_call item is missing required name field",
    ),
    (
        {"input": [{"type": "function_call", "call_id": "a", "name": "", "arguments": "{}"}]},
        "function_call item is missing required name field",
    ),
    (
        {"input": [{"type": "function_call", "call_id": "a", "name": "f"}]},
        "function_call item is missing required arguments field",
    ),
    (
        {"input": [{"type": "function_call", "call_id": "a", "name": "f", "arguments": {}}]},
        "function_call item is missing required arguments field",
    ),
    (
        {"input": [{"type": "function_call_output", "call_id": "a", "output": [1]}]},
        "function_call_output requires a valid output field",
    ),
]

FIELD_ERRORS = [
    ({"stream": "yes"}, "Stream is not bool"),
    (
        {"stream_options": {"include_usage": True}},
        "stream_options provided, but stream not set to true",
    ),
    ({"stream": True, "stream_options": 5}, "stream_options is not an object"),
    (
        {"stream": True, "stream_options": {"include_usage": 1}},
        "stream_options.include_usage is not a boolean",
    ),
    (
        {"stream": True, "stream_options": {"other": True}},
        "Found unexpected stream options. Properties accepted in stream_options: include_usage",
    ),
    (
        {"stream": True, "stream_options": {"include_usage": True}},
        "stream_options is not supported in Responses API.",
    ),
    ({"stream": True, "stream_options": None}, "stream_options is not supported in Responses API."),
    ({"temperature": 3}, "temperature out of range(0.0, 2.0)"),
    ({"top_p": "x"}, "top_p is not a valid number"),
    ({"seed": -1}, "seed out of range [0, 4294967295]"),
    ({"stream": True, "n": 2}, "n greater than 1 is not supported for Responses API streaming"),
    ({"instructions": 5}, "instructions is not a string"),
    ({"parallel_tool_calls": "yes"}, "parallel_tool_calls is not a boolean"),
    ({"store": 1}, "store is not a boolean"),
    ({"reasoning": "high"}, "reasoning is not an object"),
    ({"reasoning": {"effort": 1}}, "reasoning.effort is not a string"),
    ({"reasoning": {"effort": "minimal"}}, "reasoning.effort must be one of: low, medium, high"),
    ({"logprobs": 1}, "logprobs accepts values true or false"),
    ({"logprobs": True, "stream": True}, "logprobs are not supported in streaming mode."),
    ({"tool_choice": "any"}, "tool_choice should be either 'none' or 'auto' or 'required'"),
    ({"tool_choice": 5}, "tool_choice is not a valid JSON object or string"),
    ({"tool_choice": {"type": "function"}}, "tool_choice.name is not a valid string"),
    ({"tool_choice": {"function": {}}}, "tool_choice.function.name is not a valid string"),
    ({"tool_choice": {"type": "file_search"}}, "tool_choice.function is not a valid JSON object"),
    ({"tools": {}}, "Tools are not an array"),
    ({"tools": [5]}, "Tool is not a JSON object"),
    ({"tools": [{"name": "f"}]}, "Tool type is missing or invalid"),
    ({"tools": [{"type": "web_search_preview"}]}, "Only function tools are supported"),
    (
        {"tools": [{"type": "function", "name": "f"}, {"type": "file_search"}]},
        "Only function tools are supported",
    ),
    ({"tools": [{"type": "function"}]}, "Function object does not contain a valid name field"),
    ({"tools": [{"type": "function", "function": 5}]}, "Function is not a valid JSON object"),
    (
        {"tools": [{"type": "function", "name": "f", "parameters": 5}]},
        "Function parameters are not a valid JSON object",
    ),
    ({"max_output_tokens": "8"}, "max_output_tokens is not an unsigned integer"),
    ({"max_output_tokens": -1}, "max_output_tokens is not an unsigned integer"),
    ({"max_output_tokens": 2**32}, "max_output_tokens value can't be greater than 4294967295"),
    ({"max_output_tokens": 0}, "max_output_tokens value should be greater than 0"),
]


@pytest.mark.parametrize(("fields", "message"), INPUT_ERRORS + FIELD_ERRORS)
def test_ovms_refusals(fields: dict, message: str) -> None:
    body = {"model": "m", "input": "hi", **fields}
    if body["input"] is ABSENT:
        del body["input"]
    with pytest.raises(ResponsesRequestError) as caught:
        translate_request(body)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


def test_a_missing_model_is_refused() -> None:
    with pytest.raises(ResponsesRequestError, match=r"^model missing in request$"):
        translate_request({"input": "hi"})


def test_fields_every_endpoint_reads_are_checked_before_the_input() -> None:
    with pytest.raises(ResponsesRequestError, match=r"^temperature out of range\(0.0, 2.0\)$"):
        translate_request({"model": "m", "temperature": 5})
    with pytest.raises(ResponsesRequestError, match=r"^Stream is not bool$"):
        translate_request({"model": "m", "stream": 1, "stream_options": 5})


def test_tools_are_checked_only_after_the_input() -> None:
    with pytest.raises(ResponsesRequestError, match=r"^input cannot be empty$"):
        translate_request({"model": "m", "input": "", "tools": 5})


def test_built_in_tools_pass_when_tool_choice_is_none() -> None:
    """OVMS drops the tools of a ``tool_choice: "none"`` request before it looks at them."""
    body = {"input": "hi", "tool_choice": "none", "tools": [{"type": "web_search_preview"}]}
    equivalent = translated(body)
    assert "tools" not in equivalent.chat_body
    assert equivalent.chat_body["tool_choice"] == "none"


STREAMED_N = {"model": "m", "input": "hi", "stream": True, "n": 2}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # Fields OVMS checks before n come first...
        ({"temperature": 5}, "temperature out of range(0.0, 2.0)"),
        ({"best_of": 2}, "best_of cannot be used in streaming mode"),
        ({"n": 0}, "n value should be greater than 0"),
        ({"n": 1.5}, "n is not an unsigned integer"),
        # ...then the streamed n, before the fields after it and before the Responses part.
        ({}, "n greater than 1 is not supported for Responses API streaming"),
        (
            {"num_assistant_tokens": 10**9},
            "n greater than 1 is not supported for Responses API streaming",
        ),
        (
            {"skip_special_tokens": "no"},
            "n greater than 1 is not supported for Responses API streaming",
        ),
        ({"input": ""}, "n greater than 1 is not supported for Responses API streaming"),
        (
            {"tools": [{"type": "web_search_preview"}]},
            "n greater than 1 is not supported for Responses API streaming",
        ),
    ],
)
def test_a_streamed_n_is_refused_in_ovms_order(fields: dict, message: str) -> None:
    with pytest.raises(ResponsesRequestError) as caught:
        translate_request({**STREAMED_N, **fields})
    assert str(caught.value) == message


def test_n_is_taken_unstreamed_or_when_it_is_one() -> None:
    unary = translated({"input": "hi", "best_of": 3, "n": 2})
    assert unary.chat_body["n"] == 2
    single = translated({"input": "hi", "stream": True, "n": 1})
    assert single.stream is True
    assert single.chat_body["n"] == 1


def test_a_function_call_output_needs_no_call_id() -> None:
    call = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    messages = chat_messages(
        {
            "input": [
                {"role": "user", "content": "Weather in Paris?"},
                {"type": "function_call", "call_id": "abc", **call},
                {"type": "function_call_output", "output": "18C"},
                {"type": "function_call_output", "call_id": "", "output": "19C"},
            ]
        }
    )
    assert messages[2:] == [
        {"role": "tool", "content": "18C"},
        {"role": "tool", "content": "19C"},
    ]


def test_a_function_call_without_a_call_id_is_known_by_its_id() -> None:
    call = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    messages = chat_messages(
        {
            "input": [
                {"role": "user", "content": "Weather in Paris?"},
                {"type": "function_call", "id": "fc_1", **call},
                {"type": "function_call", "id": "fc_2", "call_id": 7, **call},
            ]
        }
    )
    assert [tool_call["id"] for tool_call in messages[1]["tool_calls"]] == ["fc_1", "fc_2"]


# -- unary Response objects ------------------------------------------------------------------


def builder(echo: dict | None = None) -> ResponseBuilder:
    return ResponseBuilder("m", echo if echo is not None else {}, created=CREATED)


def strict(body: dict) -> dict:
    """The JSON ovmsx would send, as the openai package's strict types take it: the one value
    they refuse is OVMS's incomplete reason ``max_tokens`` (OpenAI's enum says
    ``max_output_tokens``), so it alone is swapped after being checked. The client's own
    parsing reads it unchanged (test_the_client_reads_incomplete_answers)."""
    body = orjson.loads(orjson.dumps(body))
    response = body.get("response", body)
    details = response.get("incomplete_details")
    if details is not None:
        assert details == {"reason": "max_tokens"}
        response["incomplete_details"] = {"reason": "max_output_tokens"}
    return body


def validated(body: dict) -> Response:
    """The Response, validated by the openai package's type."""
    return Response.model_validate(strict(body))


def test_a_text_answer() -> None:
    echo = translated({"input": "hi", "temperature": 0.5, "max_output_tokens": 16}).request_echo
    body = builder(echo).whole(
        {"content": "Hello there", "role": "assistant", "tool_calls": []}, "stop", USAGE
    )
    response = validated(body)
    assert response.id == f"resp-{CREATED}"
    assert response.object == "response"
    assert response.created_at == CREATED
    assert response.completed_at is not None
    assert response.completed_at >= CREATED
    assert response.status == "completed"
    assert response.error is None
    assert response.incomplete_details is None
    assert response.output_text == "Hello there"
    assert [(item.type, item.id, item.status) for item in response.output] == [
        ("message", "msg-0", "completed")
    ]
    assert response.output[0].content[0].annotations == []
    assert (response.temperature, response.top_p, response.max_output_tokens) == (0.5, None, 16)
    assert response.usage.input_tokens == 11
    assert response.usage.output_tokens == 7
    assert response.usage.total_tokens == 18
    assert (response.tool_choice, response.tools) == ("none", [])
    assert (response.truncation, response.metadata) == ("disabled", {})
    assert list(body)[:8] == [
        "id",
        "object",
        "created_at",
        "completed_at",
        "error",
        "model",
        "status",
        "parallel_tool_calls",
    ]
    assert "temperature" in body
    assert "top_p" not in body


def test_a_reasoning_answer_lists_reasoning_before_the_message() -> None:
    body = builder(translated({"input": "hi", "reasoning": {"effort": "low"}}).request_echo).whole(
        {"content": "42", "reasoning_content": "Let me think.", "role": "assistant"},
        "stop",
        USAGE,
    )
    response = validated(body)
    reasoning, message = response.output
    assert (reasoning.type, reasoning.id) == ("reasoning", "rs-0")
    assert [part.text for part in reasoning.summary] == ["Let me think."]
    assert "status" not in body["output"][0]
    assert (message.id, response.output_text) == ("msg-0", "42")
    assert response.reasoning.effort == "low"


def test_a_tool_call_answer() -> None:
    echo = translated(
        {
            "input": "hi",
            "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER}],
        }
    ).request_echo
    calls = [
        {
            "id": "Ab3dE6gH9",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {
            "id": "Zz1yY2xX3",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        },
    ]
    only_calls = validated(
        builder(echo).whole({"content": "", "tool_calls": calls}, "tool_calls", USAGE)
    )
    assert [(item.type, item.id, item.call_id) for item in only_calls.output] == [
        ("function_call", "Ab3dE6gH9", "Ab3dE6gH9"),
        ("function_call", "Zz1yY2xX3", "Zz1yY2xX3"),
    ]
    assert [item.arguments for item in only_calls.output] == [
        '{"city": "Paris"}',
        '{"city": "Rome"}',
    ]
    assert {item.status for item in only_calls.output} == {"completed"}
    assert only_calls.tools[0].name == "get_weather"
    assert only_calls.tool_choice == "auto"
    with_text = validated(
        builder(echo).whole({"content": "Checking.", "tool_calls": calls[:1]}, "tool_calls", USAGE)
    )
    assert [item.type for item in with_text.output] == ["function_call", "message"]
    assert with_text.output_text == "Checking."


def test_an_answer_cut_by_the_token_limit_is_incomplete() -> None:
    body = builder().whole({"content": "Once upon a"}, "length", USAGE)
    response = validated(body)
    assert response.status == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_tokens"}
    assert response.completed_at is None
    assert "completed_at" not in body
    assert response.output[0].status == "incomplete"
    assert response.output_text == "Once upon a"


def test_several_choices_are_numbered() -> None:
    body = builder().whole_choices(
        [({"content": "A", "reasoning_content": "r"}, "stop"), ({"content": "B"}, "length")],
        USAGE,
    )
    response = validated(body)
    assert [item.id for item in response.output] == ["rs-0", "msg-0", "msg-1"]
    assert response.status == "incomplete"


def test_an_empty_answer_still_has_its_message() -> None:
    response = validated(builder().whole({"content": None}, "stop", USAGE))
    assert [(item.id, item.content[0].text) for item in response.output] == [("msg-0", "")]


# -- streamed events -------------------------------------------------------------------------


def events_of(frames: list[bytes]) -> list[dict]:
    """The frames' events, each checked to be a ``data:`` frame the openai client's event types
    accept; the last frame must be ``[DONE]``."""
    assert frames[-1] == DONE
    events = []
    for frame in frames[:-1]:
        assert frame.startswith(b"data: ")
        assert frame.endswith(b"\n\n")
        assert b"\n" not in frame[6:-2]
        event = json.loads(frame[6:-2])
        parsed = EVENTS.validate_python(strict(event))
        assert parsed.type == event["type"]
        events.append(event)
    numbers = [event["sequence_number"] for event in events]
    assert numbers == list(range(1, len(events) + 1))
    assert [event["type"] for event in events[:2]] == ["response.created", "response.in_progress"]
    return events


def check_texts(events: list[dict]) -> Response:
    """Every item's deltas add up to its done event and to the final Response's item; every
    added item is done before the end; output indexes count up as items are added."""
    final = validated(events[-1]["response"])
    added = [e for e in events if e["type"] == "response.output_item.added"]
    assert [e["output_index"] for e in added] == list(range(len(added)))
    done = {
        e["output_index"]: e["item"] for e in events if e["type"] == "response.output_item.done"
    }
    if events[-1]["type"] != "response.failed":
        assert sorted(done) == list(range(len(added)))
        assert [item.id for item in final.output] == [e["item"]["id"] for e in added]
    deltas: dict[tuple[str, str], str] = {}
    for event in events:
        kind = event["type"]
        if kind.endswith(".delta"):
            key = (kind.rsplit(".", 1)[0], event["item_id"])
            deltas[key] = deltas.get(key, "") + event["delta"]
    for event in events:
        kind = event["type"]
        if kind == "response.output_text.done":
            assert event["text"] == deltas.get(("response.output_text", event["item_id"]), "")
            assert done[event["output_index"]]["content"][0]["text"] == event["text"]
            assert final.output[event["output_index"]].content[0].text == event["text"]
        elif kind == "response.reasoning_summary_text.done":
            text = deltas[("response.reasoning_summary_text", event["item_id"])]
            assert event["text"] == text
            assert final.output[event["output_index"]].summary[0].text == text
        elif kind == "response.function_call_arguments.done":
            arguments = deltas.get(("response.function_call_arguments", event["item_id"]), "")
            assert event["arguments"] == arguments
            assert done[event["output_index"]]["arguments"] == arguments
            assert final.output[event["output_index"]].arguments == arguments
    return final


def types(events: list[dict]) -> list[str]:
    return [event["type"].removeprefix("response.") for event in events]


TEXT_DELTAS = [{"content": "Open"}, {"content": "VINO"}, {"content": " is a toolkit."}]
REASONING_DELTAS = [{"reasoning_content": "The user "}, {"reasoning_content": "asks."}]
CALL_DELTAS = [
    {
        "tool_calls": [
            {
                "index": 0,
                "id": "Ab3dE6gH9",
                "type": "function",
                "function": {"name": "get_weather", "arguments": ""},
            }
        ]
    },
    {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
    {
        "tool_calls": [
            {
                "index": 1,
                "id": "Zz1yY2xX3",
                "type": "function",
                "function": {"name": "get_time", "arguments": "{}"},
            }
        ]
    },
]


def streamed(deltas: list[dict], finish_reason: str = "stop", echo: dict | None = None) -> list:
    stream = builder(echo).stream()
    frames = stream.start()
    for delta in deltas:
        frames += stream.delta(delta)
    frames += stream.finish(finish_reason, USAGE)
    return frames


def test_a_streamed_text_answer() -> None:
    events = events_of(streamed(TEXT_DELTAS))
    assert types(events) == [
        "created",
        "in_progress",
        "output_item.added",
        "content_part.added",
        "output_text.delta",
        "output_text.delta",
        "output_text.delta",
        "output_text.done",
        "content_part.done",
        "output_item.done",
        "completed",
    ]
    created = events[0]["response"]
    assert (created["id"], created["status"], created["output"]) == (
        f"resp-{CREATED}",
        "in_progress",
        [],
    )
    assert "usage" not in created
    assert events[2]["item"] == {
        "id": "msg-0",
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    final = check_texts(events)
    assert final.output_text == "OpenVINO is a toolkit."
    assert final.status == "completed"
    assert final.usage.total_tokens == 18
    assert events[-2]["item"]["status"] == "completed"


def test_a_streamed_answer_with_reasoning() -> None:
    events = events_of(streamed(REASONING_DELTAS + TEXT_DELTAS))
    assert types(events) == [
        "created",
        "in_progress",
        "output_item.added",
        "reasoning_summary_part.added",
        "reasoning_summary_text.delta",
        "reasoning_summary_text.delta",
        "reasoning_summary_text.done",
        "reasoning_summary_part.done",
        "output_item.done",
        "output_item.added",
        "content_part.added",
        "output_text.delta",
        "output_text.delta",
        "output_text.delta",
        "output_text.done",
        "content_part.done",
        "output_item.done",
        "completed",
    ]
    final = check_texts(events)
    assert [(item.type, item.id) for item in final.output] == [
        ("reasoning", "rs-0"),
        ("message", "msg-0"),
    ]
    assert final.output[0].summary[0].text == "The user asks."
    assert final.output_text == "OpenVINO is a toolkit."
    assert events[9]["output_index"] == 1


def test_a_streamed_tool_call_answer() -> None:
    events = events_of(streamed(REASONING_DELTAS + CALL_DELTAS, "tool_calls"))
    assert types(events) == [
        "created",
        "in_progress",
        "output_item.added",
        "reasoning_summary_part.added",
        "reasoning_summary_text.delta",
        "reasoning_summary_text.delta",
        "reasoning_summary_text.done",
        "reasoning_summary_part.done",
        "output_item.done",
        "output_item.added",
        "function_call_arguments.delta",
        "function_call_arguments.delta",
        "output_item.added",
        "function_call_arguments.delta",
        "function_call_arguments.done",
        "output_item.done",
        "function_call_arguments.done",
        "output_item.done",
        "completed",
    ]
    assert events[9]["item"] == {
        "id": "Ab3dE6gH9",
        "type": "function_call",
        "status": "in_progress",
        "call_id": "Ab3dE6gH9",
        "name": "get_weather",
        "arguments": "",
    }
    final = check_texts(events)
    assert [
        (item.type, item.call_id if item.type == "function_call" else item.id)
        for item in final.output
    ] == [
        ("reasoning", "rs-0"),
        ("function_call", "Ab3dE6gH9"),
        ("function_call", "Zz1yY2xX3"),
    ]
    assert final.output[1].arguments == '{"city": "Paris"}'
    assert final.output[2].arguments == "{}"
    assert final.output_text == ""


def test_text_before_a_tool_call_keeps_its_own_output_index() -> None:
    events = events_of(streamed([{"content": "Let me check."}, *CALL_DELTAS[:3]], "tool_calls"))
    final = check_texts(events)
    assert [item.type for item in final.output] == ["message", "function_call"]
    assert final.output_text == "Let me check."


def test_a_streamed_answer_cut_by_the_token_limit() -> None:
    events = events_of(streamed(TEXT_DELTAS[:2], "length"))
    assert types(events)[-4:] == [
        "output_text.done",
        "content_part.done",
        "output_item.done",
        "incomplete",
    ]
    final = check_texts(events)
    assert final.status == "incomplete"
    assert events[-1]["response"]["incomplete_details"] == {"reason": "max_tokens"}
    assert "completed_at" not in events[-1]["response"]
    assert events[-2]["item"]["status"] == "incomplete"
    assert final.output_text == "OpenVINO"


def test_a_streamed_empty_answer_still_sends_its_message() -> None:
    events = events_of(streamed([{"content": ""}, {"reasoning_content": ""}]))
    assert types(events) == [
        "created",
        "in_progress",
        "output_item.added",
        "content_part.added",
        "output_text.done",
        "content_part.done",
        "output_item.done",
        "completed",
    ]
    assert check_texts(events).output_text == ""


def test_a_failure_mid_stream() -> None:
    stream = builder().stream()
    frames = stream.start() + stream.delta(TEXT_DELTAS[0]) + stream.fail("engine stopped")
    events = events_of(frames)
    assert types(events) == [
        "created",
        "in_progress",
        "output_item.added",
        "content_part.added",
        "output_text.delta",
        "failed",
    ]
    failed = validated(events[-1]["response"])
    assert failed.status == "failed"
    assert (failed.error.code, failed.error.message) == ("server_error", "engine stopped")
    assert failed.usage is None
    assert "completed_at" not in events[-1]["response"]
    assert failed.output_text == "Open"


def test_a_failure_before_any_event_still_opens_the_stream() -> None:
    events = events_of(builder().stream().fail("no"))
    assert types(events) == ["created", "in_progress", "failed"]


def test_a_stream_that_ended_takes_nothing_more() -> None:
    stream = builder().stream()
    stream.finish("stop", USAGE)
    with pytest.raises(RuntimeError):
        stream.delta({"content": "late"})
    with pytest.raises(RuntimeError):
        stream.fail("late")
    assert stream.start() == []


# -- the official client against these answers -----------------------------------------------


def client_for(answer) -> openai.OpenAI:
    """An openai client whose requests to /v3/responses are translated and answered by
    ``answer(equivalent, body)``, returning the bytes to send."""

    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v3/responses"
        body = json.loads(request.content)
        equivalent = translate_request(body)
        parse_request(equivalent.chat_body, CHAT, RequestLimits())
        content, kind = answer(equivalent, body)
        return httpx.Response(200, headers={"content-type": kind}, content=content)

    http = httpx.Client(transport=httpx.MockTransport(handle))
    return openai.OpenAI(
        base_url="http://ovmsx.test/v3", api_key="unused", http_client=http, max_retries=0
    )


def scripted(deltas: list[dict], finish_reason: str = "stop"):
    def answer(equivalent: ChatEquivalent, body: dict) -> tuple[bytes, str]:
        responses = ResponseBuilder(body["model"], equivalent.request_echo)
        if not equivalent.stream:
            message = {"content": "".join(d.get("content", "") for d in deltas)}
            body = responses.whole(message, finish_reason, USAGE)
            return orjson.dumps(body), "application/json"
        stream = responses.stream()
        frames = stream.start()
        for delta in deltas:
            frames += stream.delta(delta)
        return b"".join(frames + stream.finish(finish_reason, USAGE)), "text/event-stream"

    return answer


def test_the_client_reads_a_unary_answer() -> None:
    client = client_for(scripted(TEXT_DELTAS))
    response = client.responses.create(model="m", input="What is OpenVINO?", temperature=0.2)
    assert response.output_text == "OpenVINO is a toolkit."
    assert response.temperature == 0.2


def test_the_client_accumulates_a_streamed_answer() -> None:
    client = client_for(scripted(REASONING_DELTAS + TEXT_DELTAS))
    with client.responses.stream(
        model="m", input="What is OpenVINO?", reasoning={"effort": "low"}
    ) as stream:
        texts = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(texts) == "OpenVINO is a toolkit."
    assert final.output_text == "OpenVINO is a toolkit."
    assert final.output[0].summary[0].text == "The user asks."


def test_the_client_accumulates_streamed_tool_calls() -> None:
    client = client_for(scripted([{"content": "Checking."}, *CALL_DELTAS], "tool_calls"))
    tools = [
        {"type": "function", "name": "get_weather", "parameters": WEATHER, "strict": False},
        {"type": "function", "name": "get_time", "parameters": {"type": "object"}, "strict": False},
    ]
    with client.responses.stream(model="m", input="Weather?", tools=tools) as stream:
        snapshots = [
            event.snapshot
            for event in stream
            if event.type == "response.function_call_arguments.delta"
        ]
        final = stream.get_final_response()
    assert snapshots[:2] == ['{"city": ', '{"city": "Paris"}']
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(call.name, call.arguments) for call in calls] == [
        ("get_weather", '{"city": "Paris"}'),
        ("get_time", "{}"),
    ]
    assert final.output_text == "Checking."


def test_the_client_reads_incomplete_answers() -> None:
    client = client_for(scripted(TEXT_DELTAS[:1], "length"))
    response = client.responses.create(model="m", input="hi", max_output_tokens=1)
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_tokens"
    events = list(client.responses.create(model="m", input="hi", stream=True))
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_tokens"
    assert events[-1].response.output_text == "Open"


def test_the_client_reads_a_failed_stream() -> None:
    def failing(equivalent: ChatEquivalent, body: dict) -> tuple[bytes, str]:
        stream = ResponseBuilder(body["model"], equivalent.request_echo).stream()
        frames = stream.start() + stream.delta({"content": "Op"}) + stream.fail("boom")
        return b"".join(frames), "text/event-stream"

    events = list(client_for(failing).responses.create(model="m", input="hi", stream=True))
    assert [event.type for event in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.failed",
    ]
    assert events[-1].response.error.message == "boom"
    assert events[-1].response.output_text == "Op"
