"""Reloads that meet broken files: a new model version whose files are garbage or cut short,
found by the config API or the file poller; and a config reload that fails half-way (one of
three changed models cannot load, a graph's handler raises in ``initialize``).

What cannot load is reported (GET /v1/config, model metadata and ready, the log, the reload
answer), and the servables that were serving, or that load, serve: OVMS's rules (a version
that fails stays LOADING with UNKNOWN; a graph whose new definition fails is not served).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from reload_world import World, X
from rest_process import RestProcess
from serving_process import wait_until


def corrupt(folder: Path, how: str) -> None:
    if how == "garbage_xml":
        (folder / "model.xml").write_text("<net><layers>garbage")
    elif how == "truncated_bin":
        data = (folder / "model.bin").read_bytes()
        (folder / "model.bin").write_bytes(data[: len(data) // 2])
    else:
        assert how == "missing_bin"
        (folder / "model.bin").unlink()


def body(x: np.ndarray = X) -> str:
    tensor = {"name": "input", "shape": [1, 10], "datatype": "FP32", "data": x.ravel().tolist()}
    return json.dumps({"inputs": [tensor]})


def answer(server: RestProcess, name: str) -> list[float] | str:
    reply = server.request("POST", f"/v2/models/{name}/infer", body())
    document = reply.json()
    return document["outputs"][0]["data"] if reply.status == 200 else document["error"]


def states(server: RestProcess) -> dict[str, dict[str, tuple[str, str]]]:
    reply = server.request("GET", "/v1/config")
    assert reply.status == 200
    return {
        name: {
            v["version"]: (v["state"], v["status"]["error_code"])
            for v in entry["model_version_status"]
        }
        for name, entry in reply.json().items()
    }


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = World(tmp_path)
    world.add_model("multi", {1: 1.0}, model_version_policy={"all": {}})
    world.add_model("other", {1: 2.0})
    world.graph_folder("graph", add=1)
    world.add_graph("graph")
    world.write()
    return world


def serve(world: World, poll_seconds: int) -> RestProcess:
    flags = ["--file_system_poll_wait_seconds", str(poll_seconds)]
    server = RestProcess(["--config_path", str(world.config), *flags], world.root)
    server.wait_ready()
    return server


@pytest.fixture
def stopped() -> Iterator[list[RestProcess]]:
    """Servers a test started: each must stop on SIGTERM with 0."""
    servers: list[RestProcess] = []
    yield servers
    for server in servers:
        assert server.stop() == 0, server.log()


@pytest.mark.parametrize(
    ("trigger", "how"),
    [("api", "garbage_xml"), ("api", "missing_bin"), ("poller", "truncated_bin")],
)
def test_a_broken_new_version_is_reported_and_the_old_one_serves(
    world: World, stopped: list[RestProcess], trigger: str, how: str
) -> None:
    server = serve(world, 1 if trigger == "poller" else 0)
    stopped.append(server)
    # Broken before it is renamed into place: the poller never sees an intact version 2.
    staging = world.root / "version_2"
    shutil.copytree(world.root / "models" / "multi" / "1", staging)
    corrupt(staging, how)
    staging.rename(world.root / "models" / "multi" / "2")
    if trigger == "api":
        reply = server.request("POST", "/v1/config/reload")
        assert reply.status == 500, reply
        failed = "Reloading models versions failed. Check server logs for more info."
        assert reply.json()["error"] == failed
        assert "models/multi/2" in reply.json()["details"], reply.json()
    else:
        # Seen, and its load over: LOADING with OK is a load still running.
        def loaded_or_failed() -> bool:
            return states(server).get("multi", {}).get("2") not in (None, ("LOADING", "OK"))

        wait_until(loaded_or_failed, "version 2 seen and its load over", log=server.log)
    assert states(server)["multi"] == {"1": ("AVAILABLE", "OK"), "2": ("LOADING", "UNKNOWN")}
    ready = server.request("GET", "/v2/models/multi/versions/2/ready")
    assert ready.status == 404, ready
    assert "model multi version 2: LOADING" in ready.error, ready.error
    assert "Error occurred while loading model: multi; version: 2" in server.log()
    assert answer(server, "multi") == (X + 1).ravel().tolist()  # version 1, the default
    assert answer(server, "other") == (X + 2).ravel().tolist()
    assert answer(server, "graph") == (X + 1).ravel().tolist()


def test_a_serving_models_files_broken_before_its_reload(
    world: World, stopped: list[RestProcess]
) -> None:
    """The files of a serving version are cut short, then its config changes: the version
    reloads from them, fails and is reported; the other servables serve on."""
    server = serve(world, 0)
    stopped.append(server)
    corrupt(world.root / "models" / "other" / "1", "truncated_bin")
    world.models["other"]["nireq"] = 2
    world.write()
    reply = server.request("POST", "/v1/config/reload")
    assert reply.status == 500, reply
    assert reply.json()["error"] == "Reloading config file failed. Check server logs for more info."
    assert states(server)["other"] == {"1": ("LOADING", "UNKNOWN")}
    assert "Model with requested version is not" in answer(server, "other")
    assert answer(server, "multi") == (X + 1).ravel().tolist()
    assert answer(server, "graph") == (X + 1).ravel().tolist()


FAILING_INITIALIZE = """
    class OvmsPythonModel:
        def initialize(self, kwargs):
            raise RuntimeError("initialize gave up")

        def execute(self, inputs):
            return inputs
"""


def test_a_reload_that_fails_half_way(world: World, stopped: list[RestProcess]) -> None:
    """Three models change, the second cannot load; a graph's new handler raises in
    ``initialize``. The first and third load, the rest of the config applies, the reload
    answers with the failure, and every servable it did not break serves."""
    world.add_model("first", {1: 1.0})
    world.add_model("second", {1: 2.0})
    world.write()
    server = serve(world, 0)
    stopped.append(server)

    world.models["first"]["nireq"] = 2  # reloaded with its new config
    broken = world.model_folder("second_broken", {1: 5.0})
    corrupt(broken / "1", "truncated_bin")
    world.models["second"]["base_path"] = str(broken)
    world.add_model("third", {1: 3.0})  # new
    world.write_handler("graph", FAILING_INITIALIZE)
    world.graphs[0]["graph_path"] = str(world.root / "graphs" / "graph" / "graph.pbtxt")
    world.write()
    reply = server.request("POST", "/v1/config/reload")
    assert reply.status == 500, reply
    assert reply.json()["error"] == "Reloading config file failed. Check server logs for more info."

    found = states(server)
    assert found["first"] == {"1": ("AVAILABLE", "OK")}
    assert found["second"] == {"1": ("LOADING", "UNKNOWN")}
    assert found["third"] == {"1": ("AVAILABLE", "OK")}
    assert found["graph"] == {"1": ("LOADING", "FAILED_PRECONDITION")}
    assert answer(server, "first") == (X + 1).ravel().tolist()
    assert answer(server, "third") == (X + 3).ravel().tolist()
    assert answer(server, "multi") == (X + 1).ravel().tolist()
    assert answer(server, "other") == (X + 2).ravel().tolist()
    assert "initialize gave up" in answer(server, "graph")
    log = server.log()
    assert "Error occurred while loading model: second; version: 1" in log
    assert "initialize failed: RuntimeError: initialize gave up" in log

    world.write_handler("graph", "from adder_ok import *\n")  # fixed: the next reload loads it
    (world.root / "graphs" / "graph" / "adder_ok.py").write_text(
        "import numpy as np\nfrom pyovms import Tensor\n\n"
        "class OvmsPythonModel:\n"
        "    def execute(self, inputs):\n"
        "        return [Tensor('output', np.array(inputs[0]) + 1)]\n"
    )
    world.graphs[0].pop("graph_path")
    world.write()
    server.request("POST", "/v1/config/reload")
    assert answer(server, "graph") == (X + 1).ravel().tolist()
