"""A model folder that gains a graph.pbtxt turns into a graph at the next reload, and back when
it loses it: the config API reload and the poller both look at the folders again; what the name
was is retired and it serves as what it is now. In process, with tritonclient inferring."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from in_process import InProcess
from reload_world import ADDER, World, X
from serving_graphs import graph_text, python_node
from serving_pipelines import model_node, pipeline


def _graph_into(folder: Path, add: int) -> Path:
    """graph.pbtxt (one Python node adding ``add``) and its handler, written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adder.py").write_text(textwrap.dedent(ADDER.format(add=add)))
    graph = folder / "graph.pbtxt"
    graph.write_text(
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [python_node("node", "adder.py", ["INPUT:input"], ["OUTPUT:output"])],
        )
    )
    return graph


def _states(server: InProcess) -> dict[str, list[tuple[str, str]]]:
    code, body = server.status()
    assert code == 200, body
    return {
        name: [(v["version"], v["state"]) for v in entry["model_version_status"]]
        for name, entry in json.loads(body).items()
    }


@pytest.mark.parametrize("where", [".", "1"])
def test_a_reload_turns_a_model_folder_into_a_graph_and_back(tmp_path: Path, where: str) -> None:
    world = World(tmp_path)
    world.add_model("flip", {1: 1.0})
    server = InProcess(world.write())
    try:
        np.testing.assert_array_equal(server.infer("flip"), X + 1)
        graph = _graph_into(world.root / "models" / "flip" / where, add=10)

        # The config file did not change: the API reload rescans and sees the graph.
        code, body = server.reload()
        assert code == 200, body
        np.testing.assert_array_equal(server.infer("flip"), X + 10)
        assert server.client.is_model_ready("flip")
        assert server.client.get_model_metadata("flip", as_json=True)["versions"] == ["1"]
        assert _states(server)["flip"] == [("1", "AVAILABLE")]  # the graph's state

        # The poller sees it go: the graph retires and the model's versions load again.
        graph.unlink()
        server.poll()
        np.testing.assert_array_equal(server.infer("flip"), X + 1)
        assert _states(server)["flip"] == [("1", "AVAILABLE")]  # the model's version 1
        assert "flip" not in server.registry.graphs
        assert not server.registry.models["flip"].retired
    finally:
        server.stop()


def test_a_config_load_sees_a_graph_folder_and_a_poll_leaves_it_alone(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.add_model("steady", {1: 1.0})
    world.add_model("flip", {1: 1.0})
    server = InProcess(world.write())
    try:
        _graph_into(world.root / "models" / "flip", add=10)
        world.models["steady"]["nireq"] = 2  # a config change: the file is read again
        world.write()
        server.poll()
        np.testing.assert_array_equal(server.infer("flip"), X + 10)
        np.testing.assert_array_equal(server.infer("steady"), X + 1)
        graph = server.registry.graphs["flip"]
        server.poll()  # nothing changed: the graph serving is the one loaded
        assert server.registry.graphs["flip"] is graph
        assert server.registry.models["flip"].retired
    finally:
        server.stop()


def test_a_removed_models_name_goes_to_the_pipeline_given_it(tmp_path: Path) -> None:
    # The model retires (it stays listed as END) and no longer holds the name: the pipeline
    # given the name in the same reload serves, and the model takes it back when it returns.
    world = World(tmp_path)
    world.add_model("name", {1: 1.0})
    world.add_model("other", {1: 5.0})
    server = InProcess(world.write())
    try:
        removed = world.models.pop("name")
        node = model_node("n", "other", {"input": ("request", "in")}, {"output": "out"})
        world.pipelines.append(pipeline("name", ["in"], [node], {"out": ("n", "out")}))
        world.write()
        code, body = server.reload()
        assert code == 200, body
        np.testing.assert_array_equal(server.infer("name", input_name="in"), X + 5)

        world.pipelines.clear()
        world.models["name"] = removed
        world.write()
        code, body = server.reload()
        assert code == 200, body
        np.testing.assert_array_equal(server.infer("name"), X + 1)
        assert "name" not in server.registry.pipelines
    finally:
        server.stop()
