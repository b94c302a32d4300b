"""The config API in process (``ConfigService``, what ``GET /v1/config`` and
``POST /v1/config/reload`` answer), with tritonclient inferring from the same server: the status
body byte for byte, and OVMS's reload rules for unchanged, missing and broken files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from in_process import InProcess
from reload_world import World, X
from serving_pipelines import custom_node, model_node, pipeline

from ovmsx import custom_nodes
from ovmsx.config.model_config import ModelConfig
from ovmsx.config.servables import Servables
from ovmsx.config_api import ConfigService


def _version(number: int, state: str, code: str) -> str:
    return (
        "  {\n"
        f'   "version": "{number}",\n'
        f'   "state": "{state}",\n'
        '   "status": {\n'
        f'    "error_code": "{code}",\n'
        f'    "error_message": "{code}"\n'
        "   }\n"
        "  }"
    )


def _servable(name: str, *versions: str) -> str:
    if not versions:
        return f'"{name}" : \n{{\n "model_version_status": []\n}}'
    return f'"{name}" : \n{{\n "model_version_status": [\n' + ",\n".join(versions) + "\n ]\n}"


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_the_status_body_byte_for_byte(world: World) -> None:
    world.add_model("b_model", {1: 1.0, 2: 2.0}, model_version_policy={"all": {}})
    world.add_model("Upper", {1: 5.0})
    (world.root / "models" / "Upper" / "2").mkdir()  # no model file: version 2 fails to load
    world.models["Upper"]["model_version_policy"] = {"all": {}}
    world.models["no_versions"] = {"name": "no_versions", "base_path": str(world.root / "none")}
    node = model_node("n", "missing_model", {"input": ("request", "in")}, {"output": "out"})
    world.pipelines.append(pipeline("broken_pipeline", ["in"], [node], {"out": ("n", "out")}))
    world.graph_folder("graph")
    world.add_graph("graph")
    server = InProcess(world.write())
    try:
        code, body = server.status()
        assert code == 200
        expected = (
            "{\n"
            + ",\n".join(
                [
                    _servable(
                        "Upper", _version(1, "AVAILABLE", "OK"), _version(2, "LOADING", "UNKNOWN")
                    ),
                    _servable(
                        "b_model", _version(1, "AVAILABLE", "OK"), _version(2, "AVAILABLE", "OK")
                    ),
                    _servable("broken_pipeline", _version(1, "LOADING", "FAILED_PRECONDITION")),
                    _servable("graph", _version(1, "AVAILABLE", "OK")),
                    _servable("no_versions"),
                ]
            )
            + "\n}"
        )
        assert body.decode() == expected
        json.loads(body)  # and it is JSON

        # Removed from the config: listed as END; the pipeline and graph too.
        del world.models["b_model"]
        world.pipelines.clear()
        world.graphs.clear()
        world.write()
        code, body = server.reload()
        assert code == 500  # the config loads, but Upper's version 2 still fails: first error wins
        assert json.loads(body)["error"] == (
            "Reloading config file failed. Check server logs for more info."
        )
        statuses = {
            name: [(v["version"], v["state"]) for v in entry["model_version_status"]]
            for name, entry in json.loads(server.status()[1]).items()
        }
        assert statuses["b_model"] == [("1", "END"), ("2", "END")]
        assert statuses["broken_pipeline"] == [("1", "END")]
        assert statuses["graph"] == [("1", "END")]
    finally:
        server.stop()


def test_no_servables_is_an_empty_object(world: World) -> None:
    server = InProcess(world.write())
    try:
        assert server.status() == (200, b"{}")
    finally:
        server.stop()


def test_unchanged_missing_and_broken_files(world: World) -> None:
    world.add_model("add", {1: 1.0})
    server = InProcess(world.write())
    try:
        code, unchanged = server.reload()
        assert code == 200
        assert unchanged == server.status()[1]

        world.config.rename(world.root / "elsewhere.json")
        assert server.reload() == (
            500,
            b'{\n\t"error": "Config file not found or cannot open."\n}',
        )
        (world.root / "elsewhere.json").rename(world.config)

        world.config.write_text('{"model_config_list": [')  # not JSON
        code, body = server.reload()
        assert code == 412
        error = json.loads(body)
        assert error["error"] == "Reloading config file failed. Check server logs for more info."
        # OVMS's words once, then where and what: "<path>: line 1 column 24: Expecting value".
        assert error["details"].startswith("The file is not valid json - ")
        assert error["details"].count("The file is not valid json") == 1
        assert ": line 1 column 24: " in error["details"]
        np.testing.assert_array_equal(server.infer("add"), X + 1)  # the old config serves on

        world.config.write_text('{"model_config_list": [], "unknown_key": 1}')  # not a config
        code, body = server.reload()
        assert code == 412
        assert "unknown_key" in json.loads(body)["details"]
        server.poll()  # the poller does not try an unchanged broken file again
        np.testing.assert_array_equal(server.infer("add"), X + 1)
    finally:
        server.stop()


def test_a_failed_load_is_tried_again_by_the_api_not_the_poller(world: World) -> None:
    library = world.root / "libcustom_add.so"  # not there yet
    world.libraries.append({"name": "adder", "base_path": str(library)})
    node = custom_node(
        "add", "adder", {"input_numbers": ("request", "in")}, {"output_numbers": "out"}
    )
    world.pipelines.append(pipeline("custom", ["in"], [node], {"out": ("add", "out")}))
    server = InProcess(world.write())
    try:
        assert "Pipeline is not loaded yet" in server.refused("custom", input_name="in")
        shutil.copy(custom_nodes.built_in("add_one"), library)
        server.poll()  # the entry is the same: the poller leaves it failed
        assert "Pipeline is not loaded yet" in server.refused("custom", input_name="in")
        code, body = server.reload()  # unchanged file, failed last load: loaded again
        assert code == 200, body
        np.testing.assert_array_equal(server.infer("custom", input_name="in"), X + 1)
    finally:
        server.stop()


def test_a_file_that_could_not_be_read_is_tried_again(world: World) -> None:
    world.add_model("late", {1: 3.0})
    model_file = world.root / "models" / "late" / "1" / "model.xml"
    hidden = world.root / "hidden.xml"
    model_file.rename(hidden)
    server = InProcess(world.write())
    try:
        assert "not found" in server.refused("late")
        server.poll()
        assert "not found" in server.refused("late")
        hidden.rename(model_file)  # the version folder's files changed: tried again
        server.poll()
        np.testing.assert_array_equal(server.infer("late"), X + 3)
    finally:
        server.stop()


def test_single_model_mode_only_rescans_versions(tmp_path: Path) -> None:
    world = World(tmp_path)
    base = world.model_folder("solo", {1: 1.0})
    config = ModelConfig.model_validate({"name": "solo", "base_path": str(base)})
    server = InProcess(world.write())  # a server to borrow a loop and a registry from
    try:
        service = ConfigService(server.registry, None, Servables(models=[config]), None)
        server.run(service.load_initial())
        world.model_folder("solo", {2: 2.0})
        code, body = server.run(service.reload())
        assert code == 200
        assert json.loads(body)["solo"]["model_version_status"][1]["state"] == "AVAILABLE"
        np.testing.assert_array_equal(server.infer("solo"), X + 2)
    finally:
        server.stop()
