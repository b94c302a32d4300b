"""response_format through openvino-genai's structured output: on a random-weight model, 100
sampled answers all parse and validate against their JSON schema; JSON mode gives objects;
OVMS's structural-tag form works; and a grammar openvino-genai cannot compile is refused with
its reason while the engine keeps serving (it would otherwise break the pipeline for good)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import pytest
from rest_process import RestProcess

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"enum": ["red", "blue"]}, "maxItems": 3},
    },
    "required": ["name", "age", "ok", "tags"],
    "additionalProperties": False,
}
MESSAGES = [{"role": "user", "content": "Describe a person as JSON."}]


def post(server: RestProcess, document: dict):
    return server.request(
        "POST", "/v3/chat/completions", json.dumps(document), {"Content-Type": "application/json"}
    )


def chat(
    server: RestProcess, response_format: object, seed: int = 1, stop: bool = True, **fields
) -> str:
    document = {
        "model": "readable",
        "messages": MESSAGES,
        "response_format": response_format,
        "max_tokens": 300,
        "temperature": 1.0,
        "seed": seed,
        **fields,
    }
    reply = post(server, document)
    assert reply.status == 200, reply.body
    choice = reply.json()["choices"][0]
    if stop:  # the grammar ended it, not max_tokens
        assert choice["finish_reason"] == "stop", choice
    return choice["message"]["content"]


def test_a_hundred_sampled_answers_validate_against_the_schema(llm: RestProcess) -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA}}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda seed: chat(llm, response_format, seed), range(1, 101)))
    for answer in answers:
        jsonschema.validate(json.loads(answer), SCHEMA)
    assert len(set(answers)) > 50  # sampled, not one answer repeated


def test_json_mode_gives_json_objects(llm: RestProcess) -> None:
    # Any object is allowed, so a random model may write one string key for ever: every
    # answer opens an object, and the ones that ended parse as one.
    answers = [chat(llm, {"type": "json_object"}, seed, stop=False) for seed in range(1, 9)]
    assert all(answer.lstrip().startswith("{") for answer in answers)
    for answer in answers:
        try:
            parsed = json.loads(answer)
        except ValueError:
            continue  # cut by max_tokens
        assert isinstance(parsed, dict)


def test_a_streamed_answer_is_structured_too(llm: RestProcess) -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "p", "schema": SCHEMA}}
    document = {
        "model": "readable",
        "messages": MESSAGES,
        "response_format": response_format,
        "max_tokens": 300,
        "stream": True,
    }
    reply = post(llm, document)
    assert reply.status == 200
    text = ""
    for line in reply.body.decode().splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                text += choice.get("delta", {}).get("content") or ""
    jsonschema.validate(json.loads(text), SCHEMA)


def test_ovms_structural_tag_form(llm: RestProcess) -> None:
    answer = chat(llm, {"type": "const_string", "value": "Hello from a grammar"})
    assert answer == "Hello from a grammar"


def test_a_grammar_that_cannot_compile_is_refused_and_the_engine_keeps_serving(llm) -> None:
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "nonsense"}}}
    reply = post(llm, {"model": "readable", "messages": MESSAGES, "response_format": bad})
    assert reply.status == 400
    assert reply.error.endswith('response_format cannot be followed: Unsupported type "nonsense"')
    # The pipeline never saw it: the next requests, structured or not, are answered.
    jsonschema.validate(
        json.loads(chat(llm, {"type": "json_schema", "json_schema": {"schema": SCHEMA}})), SCHEMA
    )
    plain = post(llm, {"model": "readable", "messages": MESSAGES, "max_tokens": 5})
    assert plain.status == 200
    assert plain.json()["usage"]["completion_tokens"] == 5


@pytest.mark.parametrize(
    ("response_format", "message"),
    [
        (3, "response_format is not an object"),
        ({"json_schema": {}}, "response_format.type is missing or not a string"),
        ({"type": "json_schema", "json_schema": 5}, "response_format.json_schema is not an object"),
        (
            {"type": "json_schema", "json_schema": {"schema": []}},
            "response_format.json_schema.schema is not a JSON schema",
        ),
    ],
)
def test_a_malformed_response_format_is_named(llm: RestProcess, response_format, message) -> None:
    reply = post(
        llm, {"model": "readable", "messages": MESSAGES, "response_format": response_format}
    )
    assert reply.status == 400
    assert reply.error.endswith(message)


def test_text_asks_for_nothing(llm: RestProcess) -> None:
    reply = post(
        llm,
        {
            "model": "readable",
            "messages": MESSAGES,
            "response_format": {"type": "text"},
            "max_tokens": 4,
        },
    )
    assert reply.status == 200
    assert reply.json()["usage"]["completion_tokens"] == 4
