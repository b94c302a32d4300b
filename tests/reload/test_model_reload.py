"""Models and versions change while the server serves (in process: the config API and one
poller cycle called directly; inference through tritonclient)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
import serving_models as sm
from in_process import InProcess
from reload_world import F32, World, X

RETIRED = "Model with requested version is retired"
NOT_FOUND = "Model with requested version is not found"


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def _states(server: InProcess, name: str) -> list[tuple[str, str, str]]:
    entry = json.loads(server.status()[1])[name]
    return [
        (v["version"], v["state"], v["status"]["error_code"]) for v in entry["model_version_status"]
    ]


def test_models_added_changed_and_removed(world: World) -> None:
    world.add_model("stays", {1: 1.0})
    world.add_model("leaves", {1: 2.0})
    server = InProcess(world.write())
    try:
        stays = server.registry.models["stays"].versions[1]
        world.add_model("arrives", {1: 3.0})
        del world.models["leaves"]
        world.write()
        server.poll()  # the config's MD5 changed: the poller loads it
        np.testing.assert_array_equal(server.infer("arrives"), X + 3)
        assert NOT_FOUND in server.refused("leaves")  # no version left to default to
        assert RETIRED in server.refused("leaves", "1")
        assert _states(server, "leaves") == [("1", "END", "OK")]
        # Only what changed reloaded.
        assert server.registry.models["stays"].versions[1] is stays

        # A changed model config reloads the model: here it points at another folder.
        world.models["stays"]["base_path"] = str(world.model_folder("other", {1: 10.0}))
        world.write()
        assert server.reload()[0] == 200
        np.testing.assert_array_equal(server.infer("stays"), X + 10)
        assert _states(server, "stays") == [("1", "AVAILABLE", "OK")]

        # Back in the config: served again.
        world.add_model("leaves", {1: 2.0})
        world.write()
        assert server.reload()[0] == 200
        np.testing.assert_array_equal(server.infer("leaves"), X + 2)
    finally:
        server.stop()


def test_version_folders_appear_and_disappear(world: World) -> None:
    world.add_model("latest", {1: 1.0})
    world.add_model("every", {1: 1.0}, model_version_policy={"all": {}})
    server = InProcess(world.write())
    try:
        world.model_folder("latest", {2: 2.0})
        world.model_folder("every", {2: 2.0})
        server.poll()
        # Latest-1: version 2 replaces version 1; requests without a version move to it.
        np.testing.assert_array_equal(server.infer("latest"), X + 2)
        assert RETIRED in server.refused("latest", "1")
        assert _states(server, "latest") == [("1", "END", "OK"), ("2", "AVAILABLE", "OK")]
        # All: both serve.
        np.testing.assert_array_equal(server.infer("every", "1"), X + 1)
        np.testing.assert_array_equal(server.infer("every"), X + 2)

        world.remove_version("latest", 2)
        world.remove_version("every", 2)
        server.poll()
        np.testing.assert_array_equal(server.infer("latest"), X + 1)  # 1 is the latest again
        assert RETIRED in server.refused("latest", "2")
        assert RETIRED in server.refused("every", "2")
        np.testing.assert_array_equal(server.infer("every"), X + 1)
        assert _states(server, "every") == [("1", "AVAILABLE", "OK"), ("2", "END", "OK")]
    finally:
        server.stop()


def test_an_inference_on_a_retiring_version_completes(world: World) -> None:
    sm.save(sm.slow(), world.root / "models" / "slow", 1)
    world.models["slow"] = {
        "name": "slow",
        "base_path": str(world.root / "models" / "slow"),
        "plugin_config": F32,
    }
    server = InProcess(world.write())
    try:
        data = np.ones((2048, 512), np.float32)
        answer: dict = {}

        def ask() -> None:
            try:
                answer["output"] = server.infer("slow", data=data)
            except Exception as error:  # reported by the assertion below
                answer["error"] = error

        asking = threading.Thread(target=ask)
        asking.start()
        pool = server.registry.models["slow"].versions[1].compiled.pool
        while pool.active == 0 and asking.is_alive():
            threading.Event().wait(0.005)
        assert pool.active == 1
        del world.models["slow"]
        world.write()
        assert server.reload()[0] == 200  # returns once the inference has finished
        asking.join(30)
        assert not asking.is_alive()
        assert "error" not in answer, answer
        np.testing.assert_array_equal(answer["output"], data)
        assert _states(server, "slow") == [("1", "END", "OK")]
        assert NOT_FOUND in server.refused("slow")
    finally:
        server.stop()
