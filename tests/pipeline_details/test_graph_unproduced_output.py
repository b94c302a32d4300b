"""A graph whose graph-level ``output_stream`` no node produces loads, as in OVMS; a request
waiting on that output fails at run time with a message naming it. A Python node that fails to
initialize in such a graph is reported as that failure. Real server, tritonclient."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from details_servables import fp32, write_graph
from serving_graphs import graph_text, python_node
from serving_process import served
from tritonclient.utils import InferenceServerException


def _with_ghost_output(handler: str) -> str:
    """input -> one Python node -> output; "ghost" is a graph output no node produces."""
    return graph_text(
        ["OVMS_PY_TENSOR:input"],
        ["OVMS_PY_TENSOR:0:output", "OVMS_PY_TENSOR:1:ghost"],
        [python_node("node", handler, ["INPUT:input"], ["OUTPUT:output"])],
    )


@pytest.fixture(scope="module")
def client(tmp_path_factory) -> Iterator[grpcclient.InferenceServerClient]:
    root = tmp_path_factory.mktemp("unproduced_output")
    write_graph(root / "ghost", _with_ghost_output("increment.py"))
    write_graph(
        root / "ghost_and_broken_node",
        _with_ghost_output("initialize_raises.py"),
        ("initialize_raises.py",),
    )
    config = root / "config.json"
    graphs = [{"name": "ghost"}, {"name": "ghost_and_broken_node"}]
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": graphs}))
    with served(config, root) as server, grpcclient.InferenceServerClient(server.url) as triton:
        yield triton


def test_the_graph_loads(client) -> None:
    assert client.is_model_ready("ghost")
    metadata = client.get_model_metadata("ghost")
    assert [port.name for port in metadata.inputs] == ["input"]
    assert sorted(port.name for port in metadata.outputs) == ["ghost", "output"]


def test_a_request_waiting_on_it_fails_naming_it(client) -> None:
    with pytest.raises(InferenceServerException) as caught:
        client.infer("ghost", [fp32("input", np.ones((1, 3), np.float32))])
    text = str(caught.value)
    assert "StatusCode.INVALID_ARGUMENT" in text
    assert "Mediapipe execution failed. MP status" in text
    assert "no packet on output stream ghost" in text


def test_the_graph_keeps_serving_after_that(client) -> None:
    for _ in range(2):
        with pytest.raises(InferenceServerException, match="no packet on output stream ghost"):
            client.infer("ghost", [fp32("input", np.zeros((1, 2), np.float32))])
    assert client.is_server_ready()
    assert client.is_model_ready("ghost")


def test_a_node_failing_to_initialize_is_reported_as_such(client) -> None:
    assert not client.is_model_ready("ghost_and_broken_node")
    with pytest.raises(InferenceServerException) as caught:
        client.infer("ghost_and_broken_node", [fp32("input", np.ones((1, 3), np.float32))])
    text = str(caught.value)
    assert "Mediapipe is not loaded yet - ghost_and_broken_node" in text
    assert "no weights found" in text
    assert "OVMS_PY_TENSOR:1:ghost" not in text
