"""Graphs that cannot load are reported unavailable with their reason; the rest still serve."""

from __future__ import annotations

import numpy as np
import pytest
from graph_streams import Stream, tensor_input
from serving_graphs import BROKEN_GRAPHS
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
