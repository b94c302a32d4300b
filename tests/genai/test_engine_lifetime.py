"""An LLM engine is a process of its own: a client that leaves stops its generation at once, and
an engine that dies is restarted while its requests get an error and every other servable keeps
serving."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from http.client import HTTPConnection
from pathlib import Path

import pytest
from llm_graphs import SCRIPT
from rest_process import HOST, RestProcess, rest_served
from serving_process import wait_until

MESSAGES = [{"role": "user", "content": "tell me a story"}]


def engine_pids(server: RestProcess) -> list[int]:
    """The engine processes started so far, from the server's log."""
    return [
        int(pid) for pid in re.findall(r"LLM engine of \S+ started \(pid (\d+)\)", server.log())
    ]


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


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


def test_a_client_that_leaves_mid_stream_stops_its_generation(two_llms: RestProcess) -> None:
    pids = engine_pids(two_llms)
    connection = open_stream(two_llms, "readable")
    response = connection.getresponse()
    assert response.status == 200
    assert response.readline().startswith(b"data: ")
    busy = [p for p in pids if _working(p)]
    assert len(busy) == 1
    connection.close()
    # The engine goes idle: its CPU time stops growing (it sleeps on its socket).
    wait_until(lambda: not _working(busy[0]), "the engine stopped generating", log=two_llms.log)


def _working(pid: int) -> bool:
    before = cpu_ticks(pid)
    time.sleep(0.3)
    return cpu_ticks(pid) - before > 5


def test_an_engine_killed_mid_stream_fails_its_stream_and_comes_back(
    two_llms: RestProcess,
) -> None:
    pids = engine_pids(two_llms)
    connection = open_stream(two_llms, "readable")
    response = connection.getresponse()
    assert response.readline().startswith(b"data: ")
    busy = [p for p in pids if _working(p)]
    assert len(busy) == 1
    os.kill(busy[0], signal.SIGKILL)
    rest = response.read()
    connection.close()
    assert b"the LLM engine" in rest
    assert b"stopped" in rest
    assert not rest.endswith(b"data: [DONE]\n\n")
    # The other LLM keeps serving while this one restarts, and then it serves again.
    assert _chat(two_llms, "scripted") == (200, SCRIPT)
    wait_until(lambda: len(engine_pids(two_llms)) == 3, "the engine restarted", log=two_llms.log)
    status, _ = _chat(two_llms, "readable")
    assert status == 200
    assert two_llms.request("GET", "/v2/models/readable/ready").status == 200


def _chat(server: RestProcess, model: str) -> tuple[int, str]:
    body = {"model": model, "messages": MESSAGES, "max_tokens": 30}
    reply = server.request(
        "POST", "/v3/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
    )
    if reply.status != 200:
        return reply.status, reply.body.decode()
    return 200, reply.json()["choices"][0]["message"]["content"]
