"""An LLM engine is a process of its own: an engine that dies is restarted while its requests
get an error and every other servable keeps serving. (A client that leaves stops its
generation: test_llm_metrics.py watches the engine's running requests drop.)"""

from __future__ import annotations

import json
import os
import re
import signal
from http.client import HTTPConnection
from pathlib import Path

import pytest
from llm_graphs import SCRIPT
from rest_process import HOST, RestProcess, rest_served
from serving_process import wait_until

MESSAGES = [{"role": "user", "content": "tell me a story"}]


def engine_pids(server: RestProcess, folder: Path | None = None) -> list[int]:
    """The engine processes started so far (for the model folder ``folder``), from the log."""
    found = re.findall(r"LLM engine of \S+ \((.*?)\) started \(pid (\d+)\)", server.log())
    return [int(pid) for path, pid in found if folder is None or Path(path) == folder]


def exited(pid: int) -> bool:
    """Gone, or a zombie: an orphan's exit status waits for whoever reaps it (in a container,
    PID 1 may never)."""
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def open_stream(server: RestProcess, model: str, max_tokens: int = 4000) -> HTTPConnection:
    connection = HTTPConnection(HOST, server.rest_port, timeout=30)
    body = {"model": model, "messages": MESSAGES, "stream": True, "max_tokens": max_tokens}
    connection.request(
        "POST", "/v3/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
    )
    return connection


@pytest.fixture
def two_llms(llm_config: Path, tmp_path: Path):
    with rest_served(["--config_path", str(llm_config)], tmp_path) as server:
        wait_until(lambda: len(engine_pids(server)) == 2, "both engines started", log=server.log)
        yield server


def test_an_engine_killed_mid_stream_fails_its_stream_and_comes_back(
    two_llms: RestProcess, llm_folders
) -> None:
    folder = llm_folders["readable"]
    rest = _signal_mid_stream(two_llms, folder, signal.SIGKILL)
    assert b"the LLM engine" in rest
    assert b"stopped" in rest
    assert not rest.endswith(b"data: [DONE]\n\n")
    # The other LLM keeps serving while this one restarts, and then it serves again.
    assert _chat(two_llms, "scripted") == (200, SCRIPT)
    wait_until(
        lambda: len(engine_pids(two_llms, folder)) == 2, "the engine restarted", log=two_llms.log
    )
    status, _ = _chat(two_llms, "readable")
    assert status == 200
    assert two_llms.request("GET", "/v2/models/readable/ready").status == 200


def _signal_mid_stream(server: RestProcess, folder: Path, sig: int) -> bytes:
    """Start a stream from the "readable" LLM, send ``sig`` to its engine once the stream has
    begun, and return the rest of the stream as the server ends it."""
    (pid,) = engine_pids(server, folder)
    connection = open_stream(server, "readable")
    try:
        response = connection.getresponse()
        assert response.readline().startswith(b"data: ")
        os.kill(pid, sig)
        return response.read()
    finally:
        connection.close()


def _chat(server: RestProcess, model: str) -> tuple[int, str]:
    body = {"model": model, "messages": MESSAGES, "max_tokens": 30}
    reply = server.request(
        "POST", "/v3/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
    )
    if reply.status != 200:
        return reply.status, reply.body.decode()
    return 200, reply.json()["choices"][0]["message"]["content"]


def test_a_wedged_engine_is_killed_and_replaced(
    llm_config: Path, tmp_path: Path, llm_folders
) -> None:
    """An engine that holds requests and sends nothing for OVMSX_ENGINE_WEDGE_SECONDS (here it
    is frozen with SIGSTOP) is killed: its stream gets an error, and a new engine serves."""
    folder = llm_folders["readable"]
    environment = {"OVMSX_ENGINE_WEDGE_SECONDS": "2"}
    with rest_served(
        ["--config_path", str(llm_config)], tmp_path, environment=environment
    ) as server:
        wait_until(lambda: len(engine_pids(server, folder)) == 1, "the engine", log=server.log)
        rest = _signal_mid_stream(server, folder, signal.SIGSTOP)
        assert b"the LLM engine" in rest
        assert "sent nothing for" in server.log()
        wait_until(lambda: len(engine_pids(server, folder)) == 2, "a new engine", log=server.log)
        assert _chat(server, "readable")[0] == 200


def test_sse_framing_and_headers_over_plain_http(llm: RestProcess) -> None:
    connection = open_stream(llm, "scripted")
    response = connection.getresponse()
    body = response.read()
    connection.close()
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    assert response.getheader("Cache-Control") == "no-cache"
    assert response.getheader("Transfer-Encoding") == "chunked"
    frames = body.split(b"\n\n")
    assert frames[-1] == b""
    assert frames[-2] == b"data: [DONE]"
    events = [json.loads(frame.removeprefix(b"data: ")) for frame in frames[:-2]]
    assert all(frame.startswith(b"data: {") for frame in frames[:-2])
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    assert text == SCRIPT
    assert len({e["id"] for e in events}) == 1


def test_engines_exit_with_a_server_that_is_killed(llm_config: Path, tmp_path: Path) -> None:
    """No orphan: an engine whose server dies (SIGKILL, no cleanup) sees its socket close and
    exits, even in the middle of a generation."""

    server = RestProcess(["--config_path", str(llm_config)], tmp_path)
    try:
        server.wait_ready()
        wait_until(lambda: len(engine_pids(server)) == 2, "both engines", log=server.log)
        connection = open_stream(server, "readable")
        assert connection.getresponse().readline().startswith(b"data: ")
        server.kill()
        connection.close()
        for pid in engine_pids(server):
            wait_until(lambda pid=pid: exited(pid), f"engine {pid} exited")
    finally:
        server.kill()
