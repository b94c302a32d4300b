"""Pipelines, graphs and custom-node libraries change while the server serves (in process:
the config API and one poller cycle called directly; inference and streams through
tritonclient)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from graph_streams import Stream, tensor_input
from in_process import InProcess
from reload_world import ADDER, SLOW_ADDER, World, X
from serving_pipelines import custom_node, model_node, pipeline

from ovmsx import custom_nodes


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def _chain(name: str, *models: str) -> dict:
    nodes, source = [], ("request", "in")
    for index, model in enumerate(models):
        nodes.append(model_node(f"n{index}", model, {"input": source}, {"output": f"o{index}"}))
        source = (f"n{index}", f"o{index}")
    return pipeline(name, ["in"], nodes, {"out": source})


def _state(server: InProcess, name: str) -> tuple[str, str]:
    (version,) = json.loads(server.status()[1])[name]["model_version_status"]
    return version["state"], version["status"]["error_code"]


def _wait(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"no {what} after {timeout} s"
        time.sleep(0.02)


def test_pipelines_added_changed_removed_and_revalidated(world: World) -> None:
    world.add_model("one", {1: 1.0})
    world.add_model("ten", {1: 10.0})
    world.pipelines.append(_chain("kept", "one"))
    server = InProcess(world.write())
    try:
        np.testing.assert_array_equal(server.infer("kept", input_name="in"), X + 1)
        world.pipelines.append(_chain("added", "one", "ten"))
        world.write()
        assert server.reload()[0] == 200
        np.testing.assert_array_equal(server.infer("added", input_name="in"), X + 11)

        world.pipelines[1] = _chain("added", "ten", "ten")  # changed
        world.write()
        assert server.reload()[0] == 200
        np.testing.assert_array_equal(server.infer("added", input_name="in"), X + 20)

        # A model the pipeline runs on gets a new version: the pipeline moves to it.
        world.model_folder("one", {2: 2.0})
        server.poll()
        np.testing.assert_array_equal(server.infer("kept", input_name="in"), X + 2)

        # A model it needs leaves: the pipeline fails revalidation, and says why.
        del world.models["one"]
        world.write()
        code, body = server.reload()
        assert code == 500
        assert "Pipeline definition has reference to missing model" in json.loads(body)["details"]
        assert _state(server, "kept") == ("LOADING", "FAILED_PRECONDITION")
        assert "Pipeline is not loaded yet" in server.refused("kept", input_name="in")

        # The pipeline leaves too: retired, still listed.
        world.pipelines.pop(0)
        world.write()
        assert server.reload()[0] == 200
        assert "Pipeline is retired" in server.refused("kept", input_name="in")
        assert _state(server, "kept") == ("END", "OK")
        np.testing.assert_array_equal(server.infer("added", input_name="in"), X + 20)
    finally:
        server.stop()


def test_a_custom_node_library_entry_changes(world: World) -> None:
    library = world.root / "libadd.so"
    shutil.copy(custom_nodes.built_in("add_one"), library)
    world.libraries.append({"name": "adder", "base_path": str(library)})
    node = custom_node(
        "add", "adder", {"input_numbers": ("request", "in")}, {"output_numbers": "out"}
    )
    world.pipelines.append(pipeline("custom", ["in"], [node], {"out": ("add", "out")}))
    server = InProcess(world.write())
    try:
        np.testing.assert_array_equal(server.infer("custom", input_name="in"), X + 1)
        world.libraries[0]["base_path"] = str(world.root / "absent.so")
        world.write()
        code, body = server.reload()
        assert code == 500
        assert b"Custom node library failed to open" in body
        assert _state(server, "custom") == ("LOADING", "FAILED_PRECONDITION")
        moved = world.root / "moved.so"
        library.rename(moved)
        world.libraries[0]["base_path"] = str(moved)
        world.write()
        assert server.reload()[0] == 200
        np.testing.assert_array_equal(server.infer("custom", input_name="in"), X + 1)
        assert _state(server, "custom") == ("AVAILABLE", "OK")
    finally:
        server.stop()


def test_graphs_added_changed_and_removed(world: World) -> None:
    world.graph_folder("edited", add=1)
    world.add_graph("edited")
    server = InProcess(world.write())
    try:
        np.testing.assert_array_equal(server.infer("edited"), X + 1)
        world.graph_folder("added", add=5)
        world.add_graph("added")
        world.write()
        assert server.reload()[0] == 200
        np.testing.assert_array_equal(server.infer("added"), X + 5)

        # Beyond OVMS: the handler script changed, the poller reloads the graph.
        world.write_handler("edited", ADDER.format(add=2))
        server.poll()
        np.testing.assert_array_equal(server.infer("edited"), X + 2)
        # The graph file changed (OVMS: its MD5): reloaded as well; here it names a missing
        # handler, so the graph fails and says so.
        pbtxt = world.root / "graphs" / "edited" / "graph.pbtxt"
        pbtxt.write_text(pbtxt.read_text().replace("adder.py", "absent.py"))
        server.poll()
        assert "Mediapipe is not loaded yet" in server.refused("edited")
        assert _state(server, "edited") == ("LOADING", "FAILED_PRECONDITION")

        world.graphs = [g for g in world.graphs if g["name"] != "added"]
        world.write()
        server.reload()
        assert "Mediapipe is retired" in server.refused("added")
        assert _state(server, "added") == ("END", "OK")
    finally:
        server.stop()


def test_a_stream_on_a_retired_graph_goes_on(world: World) -> None:
    marker = world.root / "finalized"
    world.graph_folder("slow", handler=SLOW_ADDER.format(delay=0.05, marker=str(marker)))
    world.add_graph("slow")
    server = InProcess(world.write())
    stream = Stream(server.url)
    try:
        stream.send("slow", [tensor_input("input", X)])
        np.testing.assert_array_equal(stream.result().as_numpy("output"), X + 1)
        world.graphs.clear()
        world.write()
        assert server.reload()[0] == 200
        assert "Mediapipe is retired" in server.refused("slow")
        # The stream opened before keeps its graph, and the graph's nodes live on for it.
        stream.send("slow", [tensor_input("input", X)])
        np.testing.assert_array_equal(stream.result().as_numpy("output"), X + 1)
        assert not marker.exists()
        stream.client.stop_stream()
        _wait(marker.exists, "finalize once the stream ended")
    finally:
        stream.client.close()
        server.stop()


def test_a_graph_subconfig_change_reloads_its_models_and_the_graph(world: World) -> None:
    folder = world.graph_folder("with_models")
    subconfig = folder / "subconfig.json"

    def write_subconfig(base: Path) -> None:
        entry = {
            "name": "sub",
            "base_path": str(base),
            "plugin_config": {"INFERENCE_PRECISION_HINT": "f32"},
        }
        subconfig.write_text(json.dumps({"model_config_list": [{"config": entry}]}))

    write_subconfig(world.model_folder("sub_a", {1: 1.0}))
    world.add_graph("with_models")
    server = InProcess(world.write())
    try:
        np.testing.assert_array_equal(server.infer("sub"), X + 1)
        graph = server.registry.graphs["with_models"]
        write_subconfig(world.model_folder("sub_b", {1: 7.0}))
        server.poll()  # the main config is unchanged; its graph's subconfig is not
        np.testing.assert_array_equal(server.infer("sub"), X + 7)
        assert server.registry.graphs["with_models"] is not graph
        np.testing.assert_array_equal(server.infer("with_models"), X + 1)
    finally:
        server.stop()
