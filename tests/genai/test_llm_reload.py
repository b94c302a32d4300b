"""An LLM graph edited while clients stream from it reloads as any graph does: a new engine
starts beside the old one, requests on the old one run to their end, new ones go to the new one,
and the old engine then stops."""

from __future__ import annotations

import json
import shutil
import threading
from http.client import HTTPConnection
from pathlib import Path

from llm_graphs import graph_text
from rest_process import HOST, rest_served
from serving_process import wait_until
from test_engine_lifetime import engine_pids, exited


def stream_once(port: int) -> bytes:
    connection = HTTPConnection(HOST, port, timeout=60)
    body = {
        "model": "llm",
        "messages": [{"role": "user", "content": "go on"}],
        "stream": True,
        "max_tokens": 40,
    }
    try:
        connection.request(
            "POST", "/v3/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
        )
        return connection.getresponse().read()
    finally:
        connection.close()


def test_an_llm_graph_reloads_under_load(llm_folders, tmp_path: Path) -> None:
    folder = tmp_path / "llm"
    shutil.copytree(llm_folders["readable"], folder)
    config = tmp_path / "config.json"
    graphs = [{"name": "llm", "base_path": str(folder)}]
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": graphs}))
    answers: list[bytes] = []
    stop = threading.Event()

    with rest_served(["--config_path", str(config)], tmp_path) as server:

        def load() -> None:
            while not stop.is_set():
                answers.append(stream_once(server.rest_port))

        clients = [threading.Thread(target=load) for _ in range(4)]
        for client in clients:
            client.start()
        try:
            wait_until(lambda: len(answers) >= 4, "answers before the reload", log=server.log)
            (old,) = engine_pids(server, folder)
            (folder / "graph.pbtxt").write_text(graph_text(max_num_seqs=16))
            wait_until(
                lambda: len(engine_pids(server, folder)) == 2, "the new engine", log=server.log
            )
            before = len(answers)
            wait_until(
                lambda: len(answers) >= before + 8, "answers after the reload", log=server.log
            )
            wait_until(lambda: exited(old), "the old engine stopped", log=server.log)
        finally:
            stop.set()
            for client in clients:
                client.join()
    assert answers
    for answer in answers:
        assert answer.endswith(b"data: [DONE]\n\n"), answer[-300:]
        assert b'"finish_reason":"length"' in answer
