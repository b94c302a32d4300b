"""Every refused request field gets OVMS's code and message (COMPAT_GENAI §3.2, §4), over plain
HTTP, and the server keeps answering afterwards."""

from __future__ import annotations

import json

import pytest
from llm_graphs import SCRIPT
from rest_process import RestProcess
from serving_process import wait_until

NODE_FAILED = (
    "Mediapipe execution failed. MP status - INVALID_ARGUMENT: CalculatorGraph::Run() failed: \n"
    'Calculator::Process() for node "LLMExecutor" failed: '
)
MESSAGES = [{"role": "user", "content": "hi"}]


def post(server: RestProcess, path: str, document: object, headers: dict | None = None):
    body = document if isinstance(document, (bytes, str)) else json.dumps(document)
    return server.request(
        "POST", path, body, {"Content-Type": "application/json", **(headers or {})}
    )


# (fields added to a valid chat request, OVMS's message)
CHAT_FIELD_ERRORS = [
    ({"stream_options": {"include_usage": True}}, "stream_options provided, but stream not set to true"),
    ({"stream": True, "stream_options": []}, "stream_options is not an object"),
    ({"stream": True, "stream_options": {"include_usage": 1}}, "stream_options.include_usage is not a boolean"),
    ({"stream": True, "stream_options": {"x": True}}, "Found unexpected stream options. Properties accepted in stream_options: include_usage"),
    ({"ignore_eos": "yes"}, "ignore_eos accepts values true or false"),
    ({"max_tokens": -1}, "max_tokens is not an unsigned integer"),
    ({"max_tokens": None}, "max_tokens is not an unsigned integer"),
    ({"max_tokens": 2**32}, "max_tokens value can't be greater than 4294967295"),
    ({"frequency_penalty": "a"}, "frequency_penalty is not a valid number"),
    ({"presence_penalty": 2.5}, "presence_penalty out of range(-2.0, 2.0)"),
    ({"repetition_penalty": []}, "repetition_penalty is not a valid number"),
    ({"length_penalty": "x"}, "length_penalty is not a valid number"),
    ({"temperature": "hot"}, "temperature is not a valid number"),
    ({"temperature": 2.5}, "temperature out of range(0.0, 2.0)"),
    ({"top_p": 1.5}, "top_p out of range(0.0, 1.0)"),
    ({"top_p": "a"}, "top_p is not a valid number"),
    ({"min_p": 1.0}, "min_p out of range [0.0, 1.0)"),
    ({"top_k": 1.5}, "top_k is not an integer"),
    ({"top_k": 0}, "top_k must be -1 (all tokens) or a positive integer"),
    ({"seed": "x"}, "seed is not an integer"),
    ({"seed": -1}, "seed out of range [0, 4294967295]"),
    ({"stop": ["a"] * 17}, "stop array must have no more than 16 strings"),
    ({"stop": ["a", 1]}, "stop array contains non string element"),
    ({"stop": 5}, "stop is not a string or array of strings"),
    ({"include_stop_str_in_output": 1}, "include_stop_str_in_output accepts values true or false"),
    ({"stream": True, "include_stop_str_in_output": False}, "include_stop_str_in_output cannot be set to false if streaming is used"),
    ({"best_of": -2}, "best_of is not an unsigned integer"),
    ({"best_of": 0}, "best_of value should be greater than 0"),
    ({"best_of": 21}, "best_of exceeds limit provided in graph config: 20"),
    ({"best_of": 2, "stream": True}, "best_of cannot be used in streaming mode"),
    ({"n": "2"}, "n is not an unsigned integer"),
    ({"n": 0}, "n value should be greater than 0"),
    ({"skip_special_tokens": 1}, "skip_special_tokens is not a bool"),
    ({"n": 2}, "n value cannot be greater than best_of"),
    ({"logprobs": 1}, "logprobs accepts values true or false"),
    ({"logprobs": True, "stream": True}, "logprobs are not supported in streaming mode."),
    ({"max_completion_tokens": "a"}, "max_completion_tokens is not an unsigned integer"),
    ({"max_completion_tokens": 0}, "max_tokens value should be greater than 0"),
    ({"response_format": 3}, "response_format is not an object"),
    ({"tool_choice": "sometimes"}, "tool_choice should be either 'none' or 'auto' or 'required'"),
    ({"tool_choice": {"function": {"name": 3}}}, "tool_choice.function.name is not a valid string"),
    ({"tool_choice": 3}, "tool_choice is not a valid JSON object or string"),
    ({"tools": {}}, "Tools are not an array"),
    ({"tools": [3]}, "Tool is not a JSON object"),
    ({"tools": [{"type": "web"}]}, "Only function tools are supported"),
    ({"tools": [{"type": "function", "function": {"parameters": {}}}]}, "Function object does not contain a valid name field"),
    ({"chat_template_kwargs": []}, "chat_template_kwargs must be an object"),
    ({"chat_template_kwargs": {"add_generation_prompt": 1}}, "add_generation_prompt accepts values true or false"),
    ({"messages": "hi"}, "Messages are not an array"),
    ({"messages": []}, "Messages array cannot be empty"),
    ({"messages": [3]}, "Message is not a JSON object"),
    ({"messages": [{"content": "hi"}]}, "Every message must have 'role' field"),
    ({"messages": [{"role": "user", "content": [3]}]}, "Invalid message structure - content array should contain objects"),
    ({"messages": [{"role": "user", "content": [{"text": "a"}]}]}, "Invalid message structure - content object type missing"),
    ({"messages": [{"role": "user", "content": [{"type": "text"}]}]}, "Invalid message structure - content text missing"),
    ({"messages": [{"role": "user", "content": [{"type": "video"}]}]}, "Unsupported content type"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]}, "This servable supports only text input, but image_url has been provided"),
    ({"messages": [{"role": "assistant", "content": "", "tool_calls": [3]}]}, "Each tool_call must be an object"),
    ({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]}]}, "Each tool_call must have a 'function' object"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "message"), CHAT_FIELD_ERRORS)
def test_chat_field_errors(llm: RestProcess, fields: dict, message: str) -> None:
    document = {"model": "scripted", "messages": MESSAGES, **fields}
    reply = post(llm, "/v3/chat/completions", document)
    assert (reply.status, reply.error) == (400, NODE_FAILED + message)


COMPLETIONS_FIELD_ERRORS = [
    ({}, "prompt is missing"),
    ({"prompt": ""}, "prompt is missing"),
    ({"prompt": ["a", "b"]}, "prompt is not a string"),
    ({"prompt": "a", "logprobs": True}, "logprobs accepts integer values"),
    ({"prompt": "a", "logprobs": 2}, "accepted logprobs value is currently 1 only"),
    ({"prompt": "a", "logprobs": 1, "stream": True}, "logprobs are not supported in streaming mode."),
    ({"prompt": "a", "echo": "yes"}, "echo accepts values true or false"),
    ({"prompt": "a", "max_tokens": 0}, "max_tokens value should be greater than 0 unless echo is set"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "message"), COMPLETIONS_FIELD_ERRORS)
def test_completions_field_errors(llm: RestProcess, fields: dict, message: str) -> None:
    reply = post(llm, "/v3/completions", {"model": "scripted", **fields})
    assert (reply.status, reply.error) == (400, NODE_FAILED + message)


def test_max_tokens_above_the_graphs_limit_is_refused(llm: RestProcess) -> None:
    document = {"model": "readable", "prompt": "a", "max_tokens": 4001}
    reply = post(llm, "/v3/completions", document)
    assert reply.status == 400
    assert reply.error == NODE_FAILED + "max_tokens exceeds limit provided in graph config: 4000"


ROUTING_ERRORS = [
    (b"{", 412, "The file is not valid json - Cannot parse JSON body"),
    (b"[1]", 412, "The file is not valid json - JSON body must be an object"),
    (b"{}", 412, "The file is not valid json - model field is missing in JSON body"),
    (b'{"model": 1}', 412, "The file is not valid json - model field is not a string"),
    (b'{"model": "scripted", "stream": 1}', 412, "The file is not valid json - stream field is not a boolean"),
    (b"[" * 101 + b"]" * 101, 500, "JSON nesting depth exceeds the allowed limit"),
    (b'{"model": "nope"}', 404, "Mediapipe graph definition with requested name is not found"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "status", "message"), ROUTING_ERRORS)
def test_routing_errors(llm: RestProcess, body: bytes, status: int, message: str) -> None:
    reply = post(llm, "/v3/chat/completions", body)
    assert (reply.status, reply.error) == (status, message)


def test_a_wrong_endpoint_is_named(llm: RestProcess) -> None:
    reply = post(llm, "/v3/chat/complete", {"model": "scripted", "messages": MESSAGES})
    assert reply.status == 400
    assert reply.error.startswith("Wrong endpoint. Allowed endpoints: /v[13]/chat/completions")


def test_a_classic_model_cannot_generate(llm: RestProcess) -> None:
    reply = post(llm, "/v3/completions", {"model": "add_one", "prompt": "a"})
    assert reply.status == 404


def test_an_unknown_model_cannot_be_retrieved(llm: RestProcess) -> None:
    reply = llm.request("GET", "/v3/models/nope")
    assert (reply.status, reply.error) == (500, "Model not found")


def test_the_server_still_answers_after_every_refusal(llm: RestProcess) -> None:
    document = {"model": "scripted", "messages": MESSAGES}
    reply = post(llm, "/v1/chat/completions", document)
    assert reply.status == 200
    assert reply.json()["choices"][0]["message"]["content"] == SCRIPT


def test_every_answer_carries_cors_headers_and_preflight_is_answered(llm: RestProcess) -> None:
    reply = llm.request("OPTIONS", "/v3/chat/completions")
    assert reply.status == 200
    assert reply.body == b""
    for answer in (reply, llm.request("GET", "/v3/models"), llm.request("GET", "/v2/health/ready")):
        assert answer.headers["access-control-allow-origin"] == "*"
        assert answer.headers["access-control-allow-methods"] == "*"
        # By the Fetch standard "*" does not cover Authorization: it is named beside it.
        allowed = [
            name.strip() for name in answer.headers["access-control-allow-headers"].split(",")
        ]
        assert allowed == ["*", "Authorization"]
        assert "access-control-allow-credentials" not in answer.headers


def test_tokenize_gives_the_prompt_ids(llm: RestProcess, llm_folders) -> None:
    import openvino_genai as genai

    tokenizer = genai.Tokenizer(str(llm_folders["scripted"]))
    expected = tokenizer.encode("Hello, how are you?").input_ids.data.tolist()[0]
    one = post(llm, "/v3/tokenize", {"model": "scripted", "text": "Hello, how are you?"})
    assert one.status == 200
    assert one.json() == {"tokens": expected}
    two = post(llm, "/v3/tokenize", {"model": "scripted", "text": ["Hello", "Hello, how are you?"]})
    rows = two.json()["tokens"]
    assert rows[1] == expected
    assert len(rows[0]) < len(rows[1])  # no padding unless asked
    padded = post(
        llm,
        "/v3/tokenize",
        {
            "model": "scripted",
            "text": ["Hello", "Hello, how are you?"],
            "pad_to_max_length": True,
            "max_length": 8,
        },
    )
    assert [len(row) for row in padded.json()["tokens"]] == [8, 8]
    cut = post(
        llm, "/v3/tokenize", {"model": "scripted", "text": "Hello, how are you?", "max_length": 2}
    )
    assert cut.json() == {"tokens": expected[:2]}


TOKENIZE_ERRORS = [
    ({}, "text field is required"),
    ({"text": 3}, "text should be string, array of strings or array of integers"),
    ({"text": []}, "text array should not be empty"),
    ({"text": [1, 2]}, "Input should be string or array of strings"),
    ({"text": "a", "max_length": 0}, "max_length should be greater than 0"),
    ({"text": "a", "max_length": "x"}, "max_length should be unsigned integer"),
    ({"text": "a", "pad_to_max_length": 1}, "pad_to_max_length should be boolean"),
    ({"text": "a", "add_special_tokens": "no"}, "add_special_tokens should be boolean"),
    ({"text": "a", "padding_side": "up"}, "padding_side should be either left or right"),
    ({"text": "a", "padding_side": 1}, "padding_side should be string, either left or right"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "message"), TOKENIZE_ERRORS)
def test_tokenize_errors(llm: RestProcess, fields: dict, message: str) -> None:
    reply = post(llm, "/v3/tokenize", {"model": "scripted", **fields})
    assert (reply.status, reply.error) == (400, NODE_FAILED + message)


def test_a_request_without_content_type_is_routed_by_its_path(llm: RestProcess) -> None:
    """OVMS takes the graph's name from ``/v3/NAME`` when the body is not declared JSON."""
    body = json.dumps({"messages": MESSAGES, "max_tokens": 5})
    reply = llm.request("POST", "/v3/scripted", body)
    assert reply.status == 400  # the graph's node reads it: /v3/scripted is no endpoint of it
    assert "Wrong endpoint" in reply.error
    missing = llm.request("POST", "/v3/nowhere", body)
    assert missing.status == 404
    assert "requested name is not found" in missing.error


def test_a_kserve_request_to_an_llm_graph_is_a_precondition_failure(llm: RestProcess) -> None:
    document = {"inputs": [{"name": "input", "shape": [1], "datatype": "BYTES", "data": ["hi"]}]}
    reply = llm.request("POST", "/v2/models/readable/infer", json.dumps(document))
    assert reply.status == 412, reply.body
    assert "serves the OpenAI-compatible API" in reply.body.decode()


def test_a_refusal_is_logged_with_its_status_path_and_reason(llm: RestProcess) -> None:
    line = "Refused POST /v3/chat/completions: 400 "

    def refused_and_logged() -> bool:
        # Other tests' refusals may have used this second's lines: send until one is logged.
        reply = post(llm, "/v3/chat/completions", {"model": "scripted", "messages": "nope"})
        assert reply.status == 400
        return any(line in t and "Messages are not an array" in t for t in llm.log().splitlines())

    wait_until(refused_and_logged, "the refusal in the log", log=llm.log)


def test_refusals_are_logged_at_most_ten_a_second(caplog, monkeypatch) -> None:
    from ovmsx.genai.openai import refusal_log

    now = [100.0]
    monkeypatch.setattr(refusal_log.time, "monotonic", lambda: now[0])
    limited = refusal_log.RefusalLog()
    with caplog.at_level("INFO", logger="ovmsx.v3"):
        for _ in range(25):
            limited.refused(400, "POST", "/v3/completions", "prompt is missing")
        now[0] += 1
        limited.refused(400, "POST", "/v3/completions", "prompt is missing")
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 11
    assert lines[-1].endswith("(15 more refusals not logged)")
