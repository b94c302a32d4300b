"""ModelMetadata of graphs that call models: a stream that reaches an OpenVINOInference node,
directly or through converters, reports the model's datatype and shape; any other stream
reports OVMS's datatype "INVALID" and no shape."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from kserve_requests import assert_status, rpc_error
from serving_graphs_converters import write_converter_graphs
from serving_process import served

INVALID: tuple[str, list[int]] = ("INVALID", [])


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[grpcclient.InferenceServerClient]:
    config = write_converter_graphs(tmp_path_factory.mktemp("metadata_graphs"))
    with (
        served(config, tmp_path_factory.mktemp("metadata_server")) as process,
        grpcclient.InferenceServerClient(process.url) as triton,
    ):
        yield triton


def _tensors(tensors) -> dict[str, tuple[str, list[int]]]:
    return {t.name: (t.datatype, list(t.shape)) for t in tensors}


def _ports(client, name: str) -> tuple[dict, dict]:
    metadata = client.get_model_metadata(name)
    assert (metadata.name, list(metadata.versions), metadata.platform) == (name, ["1"], "OpenVINO")
    return _tensors(metadata.inputs), _tensors(metadata.outputs)


def test_the_model_meta_itself(client) -> None:
    """The model every meta_* graph calls: FP32 x [1..8, 3] -> INT32 y."""
    assert _ports(client, "meta") == ({"x": ("FP32", [-1, 3])}, {"y": ("INT32", [-1, 3])})


def test_streams_straight_into_and_out_of_an_inference_node_report_the_model(client) -> None:
    assert _ports(client, "meta_direct") == (
        {"model_in": ("FP32", [-1, 3])},
        {"model_out": ("INT32", [-1, 3])},
    )


def test_streams_through_converters_report_the_model(client) -> None:
    # in -> Py→OV converter -> model -> OV→Py converter -> out: the stream names, the model's types.
    assert _ports(client, "meta_converted") == (
        {"in": ("FP32", [-1, 3])},
        {"out": ("INT32", [-1, 3])},
    )


@pytest.mark.parametrize(
    ("graph", "inputs", "outputs"),
    [
        ("meta_python", ["in"], ["out"]),
        # A Python node stands between the graph's streams and the model.
        ("middle_fp32", ["in"], ["out", "seen"]),
        ("branches", ["in"], ["out"]),
        # List tags carry no one tensor to describe.
        ("lists", ["a", "b"], ["first", "second", "report"]),
        # A converter alone, with no model behind it.
        ("ov_to_py", ["in"], ["out"]),
    ],
)
def test_streams_that_reach_no_model_are_invalid_without_a_shape(
    client, graph, inputs, outputs
) -> None:
    assert _ports(client, graph) == (
        dict.fromkeys(inputs, INVALID),
        dict.fromkeys(outputs, INVALID),
    )


def test_a_graph_whose_session_names_a_missing_model_still_answers_metadata(client) -> None:
    assert client.is_model_ready("meta_missing_model")
    assert _ports(client, "meta_missing_model") == (
        {"model_in": INVALID},
        {"model_out": INVALID},
    )
    given = grpcclient.InferInput("model_in", [1, 3], "FP32")
    given.set_data_from_numpy(np.zeros((1, 3), np.float32))
    got = rpc_error(client.infer, "meta_missing_model", [given])
    assert_status(
        got,
        grpc.StatusCode.UNKNOWN,
        "Mediapipe graph precondition failed",
        'FAILED_PRECONDITION: Calculator::Open() for node "session_meta" failed: '
        "OpenVINOModelServerSessionCalculator failed to load the model (no_such_model: "
        "Model with requested name is not found - name: no_such_model)",
    )


def test_a_graph_that_did_not_load_answers_metadata_with_its_reason(client) -> None:
    got = rpc_error(client.get_model_metadata, "bad_ov_to_ov")
    assert_status(
        got,
        grpc.StatusCode.UNAVAILABLE,
        "Mediapipe is not loaded yet",
        "bad_ov_to_ov: Failed to initialize mediapipe graph - node same "
        "(PyTensorOvTensorConverterCalculator)",
    )
