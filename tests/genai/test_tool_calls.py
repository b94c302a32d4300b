"""Tool calls and reasoning through OVMS's output parsers, end to end: models whose answer is
fixed by position (examples/llm/build_llm_folder.py --script-at) write a hermes3 tool call or a
qwen3 reasoning block, and the official openai client reads them as OpenAI's ``tool_calls`` and
``reasoning_content``, unary and streamed."""

from __future__ import annotations

import json

import pytest
from llm_graphs import graph_text, write_llm_folder
from openai_clients import client
from rest_process import RestProcess, rest_served
from scripted_answers import (
    ANSWER,
    CALL_ARGUMENTS,
    FAMILY_SCRIPTS,
    HERMES_MARKERS,
    QUESTION,
    THINK_SCRIPT,
    THINKING,
    TOOL_SCRIPT,
    TOOLS,
    scripted_graph,
)


@pytest.fixture(scope="module")
def parsing(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("parsers")
    graphs = {
        "hermes": scripted_graph(root / "hermes", TOOL_SCRIPT, tool_parser="hermes3"),
        "thinker": scripted_graph(root / "thinker", THINK_SCRIPT, reasoning_parser="qwen3"),
        "detected": scripted_graph(root / "detected", TOOL_SCRIPT, HERMES_MARKERS),
        "plain": scripted_graph(root / "plain", TOOL_SCRIPT),
        **{
            family: scripted_graph(root / family, script, tool_parser=family)
            for family, script in FAMILY_SCRIPTS.items()
        },
        # A random model: only the guidance makes it write a call.
        "guided": random_graph(
            root / "guided", tool_parser="hermes3", enable_tool_guided_generation=True
        ),
        "hermes_random": random_graph(root / "hermes_random", tool_parser="hermes3"),
    }
    config = root / "config.json"
    entries = [{"name": name, "base_path": str(path)} for name, path in graphs.items()]
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": entries}))
    with rest_served(["--config_path", str(config)], root) as server:
        yield server


def random_graph(folder, **options):
    write_llm_folder(folder)
    (folder / "graph.pbtxt").write_text(graph_text(**options))
    return folder


@pytest.mark.parametrize("model", ["hermes", "detected"])
def test_a_hermes3_call_becomes_an_openai_tool_call(parsing: RestProcess, model: str) -> None:
    answer = client(parsing).chat.completions.create(model=model, messages=QUESTION, tools=TOOLS)
    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check."
    [call] = choice.message.tool_calls
    assert call.type == "function"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == CALL_ARGUMENTS
    assert len(call.id) == 9
    assert call.id.isalnum()


def test_a_streamed_call_arrives_as_openai_deltas(parsing: RestProcess) -> None:
    stream = client(parsing).chat.completions.create(
        model="hermes", messages=QUESTION, tools=TOOLS, stream=True
    )
    content, names, arguments, ids, reasons = [], [], [], set(), []
    for chunk in stream:
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                content.append(delta.content)
            for call in delta.tool_calls or []:
                assert call.index == 0
                if call.id:
                    ids.add(call.id)
                if call.function.name:
                    names.append(call.function.name)
                arguments.append(call.function.arguments or "")
            if choice.finish_reason:
                reasons.append(choice.finish_reason)
    assert "".join(content) == "Let me check."
    assert names == ["get_weather"]
    assert len(ids) == 1
    assert json.loads("".join(arguments)) == CALL_ARGUMENTS
    assert reasons == ["tool_calls"]


def test_without_tools_the_text_stays_as_it_was_written(parsing: RestProcess) -> None:
    for extra in ({}, {"tools": TOOLS, "tool_choice": "none"}):
        answer = client(parsing).chat.completions.create(model="hermes", messages=QUESTION, **extra)
        choice = answer.choices[0]
        assert choice.message.content == TOOL_SCRIPT
        assert not choice.message.tool_calls
        assert choice.finish_reason == "stop"


def test_a_servable_without_a_parser_leaves_calls_in_the_text(parsing: RestProcess) -> None:
    answer = client(parsing).chat.completions.create(model="plain", messages=QUESTION, tools=TOOLS)
    assert answer.choices[0].message.content == TOOL_SCRIPT
    assert answer.choices[0].finish_reason == "stop"


def test_qwen3_reasoning_is_reasoning_content(parsing: RestProcess) -> None:
    answer = client(parsing).chat.completions.create(model="thinker", messages=QUESTION)
    message = answer.choices[0].message
    assert message.content == ANSWER
    assert message.model_extra["reasoning_content"] == THINKING
    assert answer.choices[0].finish_reason == "stop"
    stream = client(parsing).chat.completions.create(
        model="thinker", messages=QUESTION, stream=True
    )
    reasoning, content = [], []
    for chunk in stream:
        for choice in chunk.choices:
            extra = choice.delta.model_extra or {}
            if extra.get("reasoning_content"):
                reasoning.append(extra["reasoning_content"])
            if choice.delta.content:
                content.append(choice.delta.content)
    assert "".join(reasoning) == THINKING
    assert "".join(content) == ANSWER


def test_completions_are_never_parsed(parsing: RestProcess) -> None:
    # The scripted answer only follows a prompt of the chat's length; the point is that a
    # completion's text carries no parsed fields whatever it is.
    answer = client(parsing).completions.create(model="thinker", prompt="Hi", max_tokens=8)
    assert isinstance(answer.choices[0].text, str)
    assert "reasoning_content" not in (answer.choices[0].model_extra or {})


# Bounded, so that a random model guided by it always finishes its call.
GUIDED_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"enum": ["Paris", "Rome"]}, "days": {"enum": [1, 2, 3]}},
                "required": ["city", "days"],
                "additionalProperties": False,
            },
        },
    }
]


@pytest.mark.parametrize(
    ("model", "tool_choice"), [("guided", "required"), ("hermes_random", "required")]
)
def test_a_required_call_is_guided_to_the_tools_schema(parsing, model, tool_choice) -> None:
    import jsonschema

    schema = GUIDED_TOOLS[0]["function"]["parameters"]
    for seed in range(1, 6):
        answer = client(parsing).chat.completions.create(
            model=model,
            messages=QUESTION,
            tools=GUIDED_TOOLS,
            tool_choice=tool_choice,
            max_tokens=300,
            seed=seed,
        )
        calls = answer.choices[0].message.tool_calls
        assert calls, answer
        assert calls[0].function.name == "get_weather"
        jsonschema.validate(json.loads(calls[0].function.arguments), schema)


def test_without_guidance_a_random_model_writes_no_call(parsing: RestProcess) -> None:
    answer = client(parsing).chat.completions.create(
        model="hermes_random", messages=QUESTION, tools=GUIDED_TOOLS, max_tokens=30, seed=1
    )
    assert not answer.choices[0].message.tool_calls


@pytest.mark.parametrize("family", sorted(FAMILY_SCRIPTS))
def test_each_parser_reads_its_model_familys_call(parsing: RestProcess, family: str) -> None:
    answer = client(parsing).chat.completions.create(model=family, messages=QUESTION, tools=TOOLS)
    choice = answer.choices[0]
    [call] = choice.message.tool_calls
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == CALL_ARGUMENTS
    assert choice.finish_reason == "tool_calls"
    assert not choice.message.content


def test_keeping_special_tokens_turns_the_parsers_off(parsing: RestProcess) -> None:
    """``skip_special_tokens: false`` answers the model's text as it is, as OVMS does."""
    for model in ("hermes", "thinker"):
        answer = client(parsing).chat.completions.create(
            model=model,
            messages=QUESTION,
            tools=TOOLS,
            extra_body={"skip_special_tokens": False},
        )
        message = answer.choices[0].message
        assert not message.tool_calls
        assert getattr(message, "reasoning_content", None) is None
        assert ("get_weather" if model == "hermes" else THINKING) in message.content
