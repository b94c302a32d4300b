"""Graphs that cannot load are reported unavailable with their reason; the rest still serve."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from graph_streams import Stream, tensor_input
from serving_graphs import BROKEN_GRAPHS, GOOD_GRAPHS, HANDLERS
from serving_process import ServerProcess
from tritonclient.utils import InferenceServerException


@pytest.mark.parametrize("graph", sorted(BROKEN_GRAPHS))
def test_broken_graph_is_unavailable_with_its_reason(graph_client, graph) -> None:
    _, words = BROKEN_GRAPHS[graph]
    assert not graph_client.is_model_ready(graph)
    with pytest.raises(InferenceServerException) as caught:
        graph_client.infer(graph, [tensor_input("input", np.zeros(1, np.int32))])
    text = str(caught.value)
    assert "Mediapipe is not loaded yet" in text
    for word in words:
        assert word in text


def test_good_graphs_serve_next_to_broken_ones(graph_client) -> None:
    result = graph_client.infer("no_initialize", [tensor_input("input", np.ones(2, np.int32))])
    np.testing.assert_array_equal(result.as_numpy("output"), [1, 1])


def test_unknown_name_is_not_found(graph_client) -> None:
    with pytest.raises(InferenceServerException, match="Model with requested name is not found"):
        graph_client.infer("no_such_graph", [tensor_input("input", np.ones(1, np.int32))])


def test_stream_to_an_unknown_name_ends_with_not_found(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("no_such_graph", [tensor_input("input", np.ones(1, np.int32))])
        error = stream.error()
    assert "StatusCode.NOT_FOUND" in error
    assert "Model with requested name is not found - no_such_graph" in error


def test_subconfig_models_are_served_and_a_graph_may_not_take_a_model_name(tmp_path) -> None:
    sm.save(sm.add_constant([1, 10], 1, "add_one"), tmp_path / "add_one")
    # A graph folder with a subconfig.json whose model path is relative to that file.
    folder = tmp_path / "with_subconfig"
    sm.save(sm.add_constant([1, 10], 5, "add_five"), folder / "models" / "add_five")
    subconfig = {
        "model_config_list": [{"config": {"name": "add_five", "base_path": "models/add_five"}}]
    }
    (folder / "subconfig.json").write_text(json.dumps(subconfig))
    (folder / "graph.pbtxt").write_text(GOOD_GRAPHS["no_initialize"])
    (folder / "no_initialize.py").write_text(textwrap.dedent(HANDLERS["no_initialize.py"]))
    taken = tmp_path / "add_one_graph"
    taken.mkdir()
    (taken / "graph.pbtxt").write_text(GOOD_GRAPHS["no_initialize"])
    config = {
        "model_config_list": [{"config": {"name": "add_one", "base_path": "add_one"}}],
        "mediapipe_config_list": [
            {"name": "with_subconfig"},
            {"name": "add_one", "base_path": "add_one_graph"},
        ],
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    server = ServerProcess(["--config_path", str(tmp_path / "config.json")], tmp_path)
    try:
        server.wait_ready()
        with grpcclient.InferenceServerClient(server.url) as client:
            x = np.zeros((1, 10), np.float32)
            given = grpcclient.InferInput("input", [1, 10], "FP32")
            given.set_data_from_numpy(x)
            np.testing.assert_array_equal(
                client.infer("add_five", [given]).as_numpy("output"), x + 5
            )
            # The model keeps its name; the graph that wanted it is reported, not served.
            np.testing.assert_array_equal(
                client.infer("add_one", [given]).as_numpy("output"), x + 1
            )
            assert client.is_model_ready("with_subconfig")
    finally:
        assert server.stop() == 0
    assert "Graph name is already used by a model" in server.log()
