"""Request fields read as OVMS reads them where clients differ: explicit nulls count as absent,
the stream options other servers' clients send are accepted, and OVMS's checks of the Omni
fields ``modalities`` and ``audio`` hold on a text servable."""

from __future__ import annotations

import json

import pytest
from rest_process import RestProcess

JSON = {"Content-Type": "application/json"}
BASE = {"model": "readable", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}


def chat(server: RestProcess, **fields: object):
    return server.request("POST", "/v3/chat/completions", json.dumps({**BASE, **fields}), JSON)


@pytest.mark.parametrize("field", ["stream_options", "max_completion_tokens"])
def test_an_explicit_null_counts_as_absent(llm: RestProcess, field: str) -> None:
    reply = chat(llm, **{field: None})
    assert reply.status == 200, reply.body


def test_vllm_stream_options_are_accepted_and_ignored(llm: RestProcess) -> None:
    options = {"include_usage": True, "continuous_usage_stats": True, "include_obfuscation": False}
    reply = chat(llm, stream=True, stream_options=options)
    assert reply.status == 200, reply.body
    events = [line for line in reply.body.split(b"\n\n") if line.startswith(b"data: {")]
    usage = [json.loads(event[6:]) for event in events if b'"usage":{' in event]
    assert len(usage) == 1  # one usage chunk at the end, as include_usage asks
    refused = chat(llm, stream=True, stream_options={"other": True})
    assert refused.status == 400
    assert "Properties accepted in stream_options: include_usage" in refused.error


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"modalities": "text"}, "modalities is not an array"),
        ({"modalities": ["text", 1]}, "modalities array must contain strings"),
        ({"audio": "wav"}, "audio is not an object"),
        ({"audio": {"format": "mp3"}}, 'audio.format must be "wav" or "pcm16"'),
    ],
)
def test_omni_fields_are_checked(llm: RestProcess, fields: dict, message: str) -> None:
    reply = chat(llm, **fields)
    assert reply.status == 400
    assert reply.error.endswith(message)


def test_well_formed_omni_fields_get_a_text_answer(llm: RestProcess) -> None:
    reply = chat(llm, modalities=["text"], audio={"format": "wav", "voice": "alloy"})
    assert reply.status == 200, reply.body
    assert reply.json()["choices"][0]["message"]["content"]
