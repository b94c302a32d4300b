"""POST /v3/responses end to end with the official openai client: text, reasoning and tool calls
from models whose answer is fixed by position, unary and streamed (OVMS's event order and
sequence numbers), limits and errors."""

from __future__ import annotations

import json

import openai
import pytest
from openai_clients import client
from rest_process import RestProcess, rest_served
from scripted_answers import (
    ANSWER,
    CALL_ARGUMENTS,
    QUESTION,
    THINK_SCRIPT,
    THINKING,
    TOOL_SCRIPT,
    TOOLS,
    scripted_graph,
)

TEXT = QUESTION[0]["content"]
# The Responses API's flat form of the same tool.
FLAT_TOOLS = [{"type": "function", **TOOLS[0]["function"]}]


@pytest.fixture(scope="module")
def responding(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("responses")
    graphs = {
        "hermes": scripted_graph(root / "hermes", TOOL_SCRIPT, tool_parser="hermes3"),
        "thinker": scripted_graph(root / "thinker", THINK_SCRIPT, reasoning_parser="qwen3"),
    }
    config = root / "config.json"
    entries = [{"name": name, "base_path": str(path)} for name, path in graphs.items()]
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": entries}))
    with rest_served(["--config_path", str(config)], root) as server:
        yield server


def test_a_response_with_reasoning_and_text(responding: RestProcess) -> None:
    response = client(responding).responses.create(model="thinker", input=TEXT)
    assert response.status == "completed"
    assert response.output_text == ANSWER
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message"]
    assert "".join(part.text for part in response.output[0].summary) == THINKING
    assert response.id.startswith("resp-")
    assert response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


def test_a_response_with_a_function_call(responding: RestProcess) -> None:
    response = client(responding).responses.create(model="hermes", input=TEXT, tools=FLAT_TOOLS)
    calls = [item for item in response.output if item.type == "function_call"]
    assert len(calls) == 1
    assert calls[0].name == "get_weather"
    assert json.loads(calls[0].arguments) == CALL_ARGUMENTS
    assert response.output_text == "Let me check."


def test_a_streamed_response_follows_ovms_event_order(responding: RestProcess) -> None:
    events = list(client(responding).responses.create(model="thinker", input=TEXT, stream=True))
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    numbers = [event.sequence_number for event in events]
    assert numbers == sorted(numbers)
    assert len(set(numbers)) == len(numbers)
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == ANSWER
    thinking = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    assert thinking == THINKING
    assert events[-1].response.output_text == ANSWER


def test_a_short_limit_makes_an_incomplete_response(responding: RestProcess) -> None:
    response = client(responding).responses.create(model="thinker", input=TEXT, max_output_tokens=3)
    assert response.status == "incomplete"
    assert response.usage.output_tokens == 3


def test_stream_options_are_refused_as_ovms_refuses_them(responding: RestProcess) -> None:
    body = {"model": "thinker", "input": TEXT, "stream": True, "stream_options": {}}
    reply = responding.request(
        "POST", "/v3/responses", json.dumps(body), {"Content-Type": "application/json"}
    )
    assert reply.status == 400
    assert reply.error.endswith("stream_options is not supported in Responses API.")


def test_built_in_tools_are_refused_as_ovms_refuses_them(responding: RestProcess) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client(responding).responses.create(
            model="hermes", input=TEXT, tools=[{"type": "web_search_preview"}]
        )
    # OVMS's error body: {"error": "<message>"}.
    assert caught.value.response.json()["error"].endswith("Only function tools are supported")


def test_a_streamed_n_is_refused_as_ovms_refuses_it(responding: RestProcess) -> None:
    body = {"model": "thinker", "input": TEXT, "stream": True, "n": 2}
    reply = responding.request(
        "POST", "/v3/responses", json.dumps(body), {"Content-Type": "application/json"}
    )
    assert reply.status == 400
    assert reply.error.endswith("n greater than 1 is not supported for Responses API streaming")
