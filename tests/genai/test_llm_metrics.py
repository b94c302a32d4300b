"""/metrics for LLM servables: OVMS's MediaPipe families with api="V3", and ovmsx's generation
series (time to first token, per output token, tokens, requests running and waiting, KV cache)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import openai
import pytest
from llm_graphs import SCRIPT
from rest_process import RestProcess, rest_served
from serving_process import wait_until

QUESTION = [{"role": "user", "content": "hi"}]


def sample(text: str, family: str, **labels: str) -> float:
    """The value of series ``family`` whose labels include ``labels``."""
    for line in text.splitlines():
        if not line.startswith(family + "{") and not line.startswith(family + " "):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.partition(" ")[0]))
        if all(found.get(key) == value for key, value in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {family} {labels} in:\n{text}")


@pytest.fixture(scope="module")
def metered(llm_config: Path, tmp_path_factory: pytest.TempPathFactory):
    args = ["--config_path", str(llm_config), "--metrics_enable"]
    with rest_served(args, tmp_path_factory.mktemp("metered")) as server:
        yield server


def metrics(server: RestProcess) -> str:
    reply = server.request("GET", "/metrics")
    assert reply.status == 200
    return reply.body.decode()


def test_generation_requests_are_counted(metered: RestProcess) -> None:
    client = openai.OpenAI(base_url=f"http://{metered.url}/v3", api_key="x", max_retries=0)
    answer = client.chat.completions.create(model="scripted", messages=QUESTION)
    assert answer.choices[0].message.content == SCRIPT
    chunks = list(client.chat.completions.create(model="scripted", messages=QUESTION, stream=True))
    bad = metered.request(
        "POST",
        "/v3/chat/completions",
        json.dumps({"model": "scripted", "messages": QUESTION, "temperature": 9}),
        {"Content-Type": "application/json"},
    )
    assert bad.status == 400
    text = metrics(metered)
    unary = {"api": "V3", "interface": "REST", "method": "Unary", "name": "scripted"}
    stream = {**unary, "method": "Stream"}
    assert sample(text, "ovms_requests_accepted", **unary) == 2
    assert sample(text, "ovms_responses", **unary) == 1
    assert sample(text, "ovms_graph_error", **unary) == 1
    assert sample(text, "ovms_requests_accepted", **stream) == 1
    # Every chunk (the last being "data: [DONE]") is a response.
    assert sample(text, "ovms_responses", **stream) == len(chunks) + 1
    assert sample(text, "ovms_graph_processing_time_us_count", method="Unary", name="scripted") == 1
    tokens = answer.usage
    assert sample(text, "ovmsx_llm_prompt_tokens", name="scripted") == 2 * tokens.prompt_tokens
    assert (
        sample(text, "ovmsx_llm_generated_tokens", name="scripted") == 2 * tokens.completion_tokens
    )
    assert sample(text, "ovmsx_llm_time_to_first_token_us_count", name="scripted") == 2
    assert sample(text, "ovmsx_llm_time_per_output_token_us_count", name="scripted") == 2
    assert sample(text, "ovmsx_llm_time_to_first_token_us_sum", name="scripted") > 0


def test_a_client_that_leaves_mid_stream_stops_its_generation_at_once(metered: RestProcess) -> None:
    from test_engine_lifetime import open_stream

    connection = open_stream(metered, "readable")
    response = connection.getresponse()
    assert response.readline().startswith(b"data: ")
    wait_until(
        lambda: sample(metrics(metered), "ovmsx_llm_requests_running", name="readable") == 1,
        "the running request is reported",
        log=metered.log,
    )
    assert sample(metrics(metered), "ovmsx_llm_kv_cache_usage_percent", name="readable") >= 0
    connection.close()
    wait_until(
        lambda: sample(metrics(metered), "ovmsx_llm_requests_running", name="readable") == 0,
        "the stopped request is gone",
        log=metered.log,
    )
    assert sample(metrics(metered), "ovmsx_llm_requests_waiting", name="readable") == 0


def test_a_client_that_leaves_a_unary_generation_stops_it(metered: RestProcess) -> None:
    import socket

    body = json.dumps(
        {"model": "readable", "messages": QUESTION, "max_tokens": 4000, "ignore_eos": True}
    ).encode()
    request = (
        b"POST /v3/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    with socket.create_connection(("127.0.0.1", metered.rest_port)) as connection:
        connection.sendall(request)
        wait_until(
            lambda: sample(metrics(metered), "ovmsx_llm_requests_running", name="readable") == 1,
            "the unary generation is running",
            log=metered.log,
        )
    wait_until(
        lambda: sample(metrics(metered), "ovmsx_llm_requests_running", name="readable") == 0,
        "the unary generation stopped",
        log=metered.log,
    )
