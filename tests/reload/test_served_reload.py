"""Reloads of a running ``ovmsx`` process: the file poller on its own timer, the config API
over plain HTTP (``GET /v1/config``, ``POST /v1/config/reload``), and ``--grpc_workers``
processes reloading together; inference through tritonclient."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from reload_world import World, X
from rest_process import RestProcess
from tritonclient.utils import InferenceServerException

WAIT = 30.0


def _wait(condition, server: RestProcess, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline or server.process.poll() is not None:
            pytest.fail(f"no {what} after {WAIT} s:\n{server.log()}")
        time.sleep(0.05)


def _answers(server: RestProcess, name: str) -> np.ndarray | None:
    given = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
    with grpcclient.InferenceServerClient(f"127.0.0.1:{server.port}") as client:
        try:
            return client.infer(name, [given]).as_numpy("output")
        except InferenceServerException:
            return None


def _states(server: RestProcess) -> dict[str, list[str]]:
    reply = server.request("GET", "/v1/config")
    assert reply.status == 200
    return {
        name: [v["state"] for v in entry["model_version_status"]]
        for name, entry in json.loads(reply.body).items()
    }


def _serve(world: World, *flags: str, workdir: Path) -> RestProcess:
    server = RestProcess(["--config_path", str(world.config), *flags], workdir)
    server.wait_ready()
    return server


def test_the_poller_follows_the_config_file(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.add_model("first", {1: 1.0})
    world.write()
    server = _serve(world, "--file_system_poll_wait_seconds", "1", workdir=tmp_path)
    try:
        reply = server.request("GET", "/v1/config")
        assert reply.body == (
            b'{\n"first" : \n{\n "model_version_status": [\n  {\n   "version": "1",\n'
            b'   "state": "AVAILABLE",\n   "status": {\n    "error_code": "OK",\n'
            b'    "error_message": "OK"\n   }\n  }\n ]\n}\n}'
        )
        world.add_model("second", {1: 2.0})
        world.write()
        _wait(lambda: _answers(server, "second") is not None, server, "model added")
        np.testing.assert_array_equal(_answers(server, "second"), X + 2)

        del world.models["first"]
        world.write()
        _wait(lambda: _states(server).get("first") == ["END"], server, "model retired")
        assert _answers(server, "first") is None

        world.config.write_text("{not json")
        reply = server.request("POST", "/v1/config/reload")
        assert reply.status == 412
        assert json.loads(reply.body)["error"] == (
            "Reloading config file failed. Check server logs for more info."
        )
        np.testing.assert_array_equal(_answers(server, "second"), X + 2)
        assert "Configuration file is not a valid JSON file" in server.log()
        assert "Loaded model second; version: 1; batch size: 1; No of InferRequests:" in (
            server.log()
        )
    finally:
        assert server.stop() == 0, server.log()


def test_without_polling_only_the_api_reloads(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.add_model("first", {1: 1.0})
    world.write()
    server = _serve(world, "--file_system_poll_wait_seconds", "0", workdir=tmp_path)
    try:
        world.add_model("second", {1: 2.0})
        world.write()
        world.model_folder("first", {2: 3.0})
        time.sleep(1.5)  # longer than the default poll period: a poller would have acted
        assert _answers(server, "second") is None
        np.testing.assert_array_equal(_answers(server, "first"), X + 1)
        reply = server.request("POST", "/v1/config/reload")
        assert reply.status == 200
        assert reply.body == server.request("GET", "/v1/config").body
        np.testing.assert_array_equal(_answers(server, "second"), X + 2)
        np.testing.assert_array_equal(_answers(server, "first"), X + 3)
        assert "Started model manager thread" not in server.log()
    finally:
        assert server.stop() == 0, server.log()


def test_every_worker_reloads(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.add_model("first", {1: 1.0})
    world.write()
    server = _serve(
        world, "--file_system_poll_wait_seconds", "0", "--grpc_workers", "2", workdir=tmp_path
    )
    try:
        _wait(lambda: "all 2 workers serving" in server.log(), server, "two workers serving")
        world.add_model("second", {1: 2.0})
        world.write()
        assert server.request("POST", "/v1/config/reload").status == 200
        loaded = re.compile(r"\[worker (\d) pid \d+\] Loaded model second; version: 1;")
        _wait(
            lambda: set(loaded.findall(server.log())) == {"0", "1"},
            server,
            "model loaded by both workers",
        )
        for _ in range(4):  # new connections, whichever worker they reach
            np.testing.assert_array_equal(_answers(server, "second"), X + 2)
    finally:
        assert server.stop() == 0, server.log()
