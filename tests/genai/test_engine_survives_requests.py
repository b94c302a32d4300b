"""No request takes an LLM engine down or holds its other streams: each request that once
killed or stalled the engine is refused with a 400 naming its field (or run safely) while a
stream on the same LLM runs beside it, and that stream ends untouched, on the same engine.

The engine's failures themselves (a death mid-stream, a restart, a replacement on a bound) are
served as OpenAI clients expect: an SSE error event they raise, 503 with ``Retry-After`` while
the engine comes back, and no failed request while a grown engine is replaced.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import HTTPConnection
from pathlib import Path

import openai
import pytest
from llm_graphs import llm_servable
from openai_clients import client
from rest_process import HOST, RestProcess, rest_served
from serving_process import wait_until
from test_engine_lifetime import engine_pids

JSON = {"Content-Type": "application/json"}
CHAT = [{"role": "user", "content": "hi"}]


def post(server: RestProcess, path: str, body: dict):
    return server.request("POST", path, json.dumps(body), JSON)


@contextmanager
def stream_beside(server: RestProcess, model: str = "readable") -> Iterator[None]:
    """A stream of 300 tokens runs while the block sends its requests; it must then have
    ended whole (its finish reason, ``[DONE]``, no error) on the engine it started on."""
    before = engine_pids(server)
    ended: list[bytes] = []

    def read() -> None:
        connection = HTTPConnection(HOST, server.rest_port, timeout=120)
        body = {"model": model, "messages": CHAT, "stream": True, "max_tokens": 300}
        body["ignore_eos"] = True
        connection.request("POST", "/v3/chat/completions", json.dumps(body), JSON)
        ended.append(connection.getresponse().read())
        connection.close()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        yield
    finally:
        reader.join()
    (answer,) = ended
    assert answer.endswith(b"data: [DONE]\n\n"), answer[-300:]
    assert b'"finish_reason":"length"' in answer
    assert b'"error"' not in answer
    assert engine_pids(server) == before
    assert "stopped (exit code" not in server.log()


def refusal(reply, *words: str) -> str:
    assert reply.status == 400, reply.body
    message = reply.error
    for word in words:
        assert word in message, message
    assert "/home/" not in message, message
    assert "Check '" not in message, message
    return message


# -- tokenize ---------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [2**31, 2**32, 2**63])
def test_a_tokenize_length_past_32_bits_is_refused(llm: RestProcess, length: int) -> None:
    with stream_beside(llm):
        for pad in (False, True):
            body = {"model": "readable", "text": "hello", "max_length": length}
            reply = post(llm, "/v3/tokenize", {**body, "pad_to_max_length": pad})
            refusal(reply, "max_length value can't be greater than 2147483647")


@pytest.mark.parametrize("length", [10**9, 10**7])
def test_padding_to_a_huge_length_is_refused(llm: RestProcess, length: int) -> None:
    body = {"model": "readable", "text": ["a", "b"], "max_length": length}
    with stream_beside(llm):
        reply = post(llm, "/v3/tokenize", {**body, "pad_to_max_length": True})
        refusal(reply, "pad_to_max_length", str(2 * length))


def test_padding_without_a_length_pads_to_the_models_context(llm: RestProcess, llm_folders) -> None:
    """openvino-genai would pad to the tokenizer's model_max_length (10^30 here)."""
    config = json.loads((llm_folders["readable"] / "config.json").read_text())
    reply = post(
        llm, "/v3/tokenize", {"model": "readable", "text": "hi", "pad_to_max_length": True}
    )
    assert reply.status == 200, reply.body
    assert len(reply.json()["tokens"]) == config["max_position_embeddings"]


def test_the_longest_length_still_tokenizes(llm: RestProcess) -> None:
    body = {"model": "readable", "text": "hello world", "max_length": 2**31 - 1}
    reply = post(llm, "/v3/tokenize", body)
    assert reply.status == 200, reply.body
    assert reply.json()["tokens"]


# -- generation fields ------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v3/completions", "/v3/chat/completions"])
def test_beam_search_with_a_stop_string_is_refused(llm: RestProcess, path: str) -> None:
    body: dict = {"model": "readable", "max_tokens": 20, "best_of": 2, "n": 2, "stop": "a"}
    body.update({"prompt": "hello"} if "chat" not in path else {"messages": CHAT})
    with stream_beside(llm):
        refusal(post(llm, path, body), "stop cannot be used with best_of greater than 1")
        # An empty stop string is no stop string: beam search runs.
        reply = post(llm, path, {**body, "stop": [""]})
        assert reply.status == 200, reply.body
        assert len(reply.json()["choices"]) == 2


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"repetition_penalty": 0}, "repetition_penalty must be greater than 0"),
        ({"top_p": 0}, "top_p must be a positive float"),
        ({"best_of": 2, "repetition_penalty": 1.5}, "not currently supported by beam search"),
        ({"num_assistant_tokens": 100000}, "num_assistant_tokens must not be greater than 256"),
    ],
)
def test_fields_openvino_genai_refuses_are_worded_without_its_paths(
    llm: RestProcess, fields: dict, words: str
) -> None:
    body = {"model": "readable", "prompt": "hello", "max_tokens": 4, **fields}
    refusal(post(llm, "/v3/completions", body), words)


def test_assisted_decoding_knobs_do_nothing_without_a_draft(llm: RestProcess) -> None:
    """``assistant_confidence_threshold`` made openvino-genai's step throw on a pipeline
    without a draft model; it is dropped there, as the other assisted knobs."""
    body = {"model": "readable", "prompt": "hello", "max_tokens": 4, "stream": True}
    with stream_beside(llm):
        for fields in ({"assistant_confidence_threshold": 1.5}, {"max_ngram_size": 3}):
            reply = post(llm, "/v3/completions", {**body, **fields})
            assert reply.status == 200
            assert reply.body.endswith(b"data: [DONE]\n\n"), reply.body


# -- structured output ------------------------------------------------------------------------


def schema_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "big", "schema": schema}}


def properties(count: int) -> dict:
    return {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(count)}}


@pytest.mark.parametrize(
    "schema",
    [
        properties(10_000),
        properties(50_000),
        {"type": "object", "properties": {"e": {"enum": [f"v{i}" for i in range(100_000)]}}},
    ],
    ids=["10k-properties", "50k-properties", "100k-enum"],
)
@pytest.mark.parametrize("path", ["/v3/chat/completions", "/v3/completions"])
def test_a_huge_schema_is_refused_before_the_engine(
    llm: RestProcess, schema: dict, path: str
) -> None:
    body: dict = {"model": "readable", "max_tokens": 4, "response_format": schema_format(schema)}
    body.update({"prompt": "hello"} if "chat" not in path else {"messages": CHAT})
    with stream_beside(llm):
        refusal(post(llm, path, body), "response_format cannot be followed", "bytes long")


def test_completions_follow_response_format(llm: RestProcess) -> None:
    body = {"model": "readable", "prompt": "hello", "max_tokens": 4}
    bad = {"type": "json_schema", "json_schema": {"schema": {"type": "nope"}}}
    refusal(post(llm, "/v3/completions", {**body, "response_format": bad}), "nope")
    const = {"type": "const_string", "value": "fixed"}
    reply = post(llm, "/v3/completions", {**body, "max_tokens": 10, "response_format": const})
    assert reply.status == 200, reply.body
    assert reply.json()["choices"][0]["text"].startswith("fix")


# -- the engine's own failures, on a server of their own --------------------------------------


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RestProcess, Path]]:
    """A server whose engine is replaced after every 4 generations, whose grammars must compile
    within 10 ms, on an LLM folder of its own (the 503 test moves it away)."""
    root = tmp_path_factory.mktemp("bounded")
    folder = llm_servable(root / "bounded", max_tokens_limit=4000)
    temporary = root / "tmp"
    temporary.mkdir()
    environment = {
        "OVMSX_ENGINE_MAX_REQUESTS": "4",
        "OVMSX_GRAMMAR_COMPILE_LIMIT_S": "0.01",
        "TMPDIR": str(temporary),
    }
    command = ["--model_name", "bounded", "--model_path", str(folder)]
    with rest_served(command, root, environment=environment) as server:
        yield server, folder
    # The grammar checker's probe model is gone with the server (the checker is killed).
    assert not list(temporary.glob("ovmsx-grammar-probe-*"))


def test_a_grammar_slow_to_compile_is_refused(bounded) -> None:
    server, _ = bounded
    body = {"model": "bounded", "messages": CHAT, "max_tokens": 4}
    reply = post(
        server, "/v3/chat/completions", {**body, "response_format": schema_format(properties(1000))}
    )
    refusal(reply, "response_format cannot be followed", "longer than the limit of 0.01 s")


def test_a_replaced_engine_loses_no_request(bounded) -> None:
    server, _ = bounded
    first = engine_pids(server)
    results: list[int] = []

    def generate(index: int) -> None:
        body = {"model": "bounded", "prompt": "hello", "max_tokens": 40, "stream": index % 2 == 0}
        reply = post(server, "/v3/completions", body)
        complete = not body["stream"] or reply.body.endswith(b"data: [DONE]\n\n")
        results.append(reply.status if complete else -1)

    rounds = 0
    while "Replacing the LLM engine" not in server.log() or len(engine_pids(server)) < 2:
        threads = [threading.Thread(target=generate, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        rounds += 1
        assert rounds < 100, server.log()
    assert set(results) == {200}
    assert engine_pids(server)[0] == first[0]
    assert "stopped (exit code" not in server.log()
    assert post(server, "/v3/completions", {"model": "bounded", "prompt": "a"}).status == 200


def test_a_stream_cut_by_an_engine_death_raises_in_the_openai_client(bounded) -> None:
    server, _ = bounded
    stream = client(server).chat.completions.create(
        model="bounded", messages=CHAT, max_tokens=3000, stream=True
    )

    def read_killing_the_engine() -> None:
        for number, _ in enumerate(stream):
            if number == 4:
                os.kill(engine_pids(server)[-1], signal.SIGKILL)

    with pytest.raises(openai.APIError, match=r"the LLM engine of \S+ stopped"):
        read_killing_the_engine()
    # Sent at once, the next request waits for the engine to come back.
    reply = post(server, "/v3/completions", {"model": "bounded", "prompt": "a", "max_tokens": 3})
    assert reply.status == 200, reply.body


def test_an_engine_that_cannot_come_back_answers_503(bounded) -> None:
    """Its model file gone, the engine's restarts fail: requests wait a bounded time, then get
    503 with Retry-After (never OVMS's 500 for a graph that never loaded); the file back, the
    engine is too."""
    server, folder = bounded
    wait_until(lambda: server.request("GET", "/v2/models/bounded/ready").status == 200, "ready")
    model = folder / "openvino_model.xml"
    away = folder / "openvino_model.xml.away"
    model.rename(away)
    try:
        os.kill(engine_pids(server)[-1], signal.SIGKILL)
        ready = "/v2/models/bounded/ready"
        wait_until(lambda: server.request("GET", ready).status != 200, "the engine seen gone")
        reply = post(server, "/v3/completions", {"model": "bounded", "prompt": "a"})
        assert reply.status == 503, reply.body
        assert reply.headers["retry-after"] == "2"
        assert "restarting its engine" in reply.error
    finally:
        away.rename(model)
    wait_until(
        lambda: post(server, "/v3/completions", {"model": "bounded", "prompt": "a"}).status == 200,
        "the engine back",
        timeout=60,
        log=server.log,
    )


def test_an_engine_past_its_memory_bound_is_replaced(tmp_path: Path) -> None:
    """``--engine_max_rss`` below any engine's size: the first engine is replaced once it has
    served a while, and every request on the way is answered."""
    folder = llm_servable(tmp_path / "grown", max_tokens_limit=4000)
    command = ["--model_name", "grown", "--model_path", str(folder), "--engine_max_rss", "1M"]
    with rest_served(command, tmp_path) as server:
        statuses = []
        while "passed --engine_max_rss" not in server.log() or len(engine_pids(server)) < 2:
            body = {"model": "grown", "prompt": "hello", "max_tokens": 20, "stream": True}
            reply = post(server, "/v3/completions", body)
            statuses.append(reply.status if reply.body.endswith(b"data: [DONE]\n\n") else -1)
            assert len(statuses) < 2000, server.log()
        assert set(statuses) == {200}
        assert "stopped (exit code" not in server.log()


def _checkers(server: RestProcess) -> list:
    """The server's live grammar checkers (a killed one stays a zombie until the server next
    uses its checker, which a cached grammar never does)."""
    import psutil

    live = []
    for child in psutil.Process(server.process.pid).children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "grammar_process" in " ".join(
                child.cmdline()
            ):
                live.append(child)
        except psutil.Error:  # gone meanwhile
            pass
    return live


def _killed(process) -> None:
    import psutil

    process.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise AssertionError(f"the grammar checker {process.pid} outlived SIGKILL")


def test_a_grammar_that_passed_is_not_checked_again(llm: RestProcess) -> None:
    """The many requests of one schema go straight to the engine once it has passed: with the
    checker process gone, the same schema is still served and no checker starts; a new schema
    starts one."""
    body = {"model": "readable", "messages": CHAT, "max_tokens": 4}

    def ask(schema: dict) -> None:
        reply = post(
            llm, "/v3/chat/completions", {**body, "response_format": schema_format(schema)}
        )
        assert reply.status == 200, reply.body

    seen = properties(7)
    ask(seen)
    for checker in _checkers(llm):
        _killed(checker)
    ask(seen)
    assert _checkers(llm) == []
    ask(properties(8))
    assert len(_checkers(llm)) == 1
    # Killed with no time to be noticed, a checker is replaced on the next new schema.
    for checker in _checkers(llm):
        checker.kill()
    ask(properties(9))
    assert len(_checkers(llm)) == 1
