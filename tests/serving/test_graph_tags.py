"""Graph-level stream tags over KServe (COMPAT §4.1-4.5): IMAGE, TENSOR, OVTENSOR/untagged,
REQUEST/RESPONSE passthrough, and request parameters as side packets, each through a user
Python calculator on a real server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from graph_streams import Stream, tensor_input, timestamp_of
from kserve_requests import add_raw, add_typed, assert_status, request, rpc_error
from serving_graphs_tags import BROKEN_TAG_GRAPHS, TAG_GRAPHS, tag_graphs, write_graphs
from serving_process import ServerProcess, served

NOT_LOADED = "Mediapipe is not loaded yet"
EXECUTION = "Mediapipe execution failed. MP status"
SHAPE = "Invalid input shape"
FORMAT = "Inputs inside buffer does not match expected format."
PRECISION = "Invalid input precision"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    config = write_graphs(tmp_path_factory.mktemp("tag_graphs"), tag_graphs())
    with served(config, tmp_path_factory.mktemp("tag_srv")) as process:
        yield process


def _raw(name: str, data: np.ndarray, datatype: str) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, list(data.shape), datatype)
    given._raw_content = data.tobytes()  # INT8/FP16 and friends, byte for byte
    return given


def _report(result) -> object:
    return json.loads(result.as_numpy("report").tobytes())


def _pixels(dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(sum(shape))
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-100, 100, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


# -- IMAGE ---------------------------------------------------------------------------------

# (request datatype, channels, numpy type, MediaPipe format, answer datatype): the whole table.
IMAGE_TABLE = [
    ("UINT8", 1, np.uint8, "GRAY8", "UINT8"),
    ("UINT8", 3, np.uint8, "SRGB", "UINT8"),
    ("UINT8", 4, np.uint8, "SRGBA", "UINT8"),
    ("INT8", 1, np.int8, "GRAY8", "UINT8"),
    ("INT8", 3, np.int8, "SRGB", "UINT8"),
    ("INT8", 4, np.int8, "SRGBA", "UINT8"),
    ("UINT16", 1, np.uint16, "GRAY16", "UINT16"),
    ("UINT16", 3, np.uint16, "SRGB48", "UINT16"),
    ("UINT16", 4, np.uint16, "SRGBA64", "UINT16"),
    ("INT16", 1, np.int16, "GRAY16", "UINT16"),
    ("INT16", 3, np.int16, "SRGB48", "UINT16"),
    ("INT16", 4, np.int16, "SRGBA64", "UINT16"),
    ("FP16", 1, np.float16, "GRAY16", "UINT16"),
    ("FP16", 3, np.float16, "SRGB48", "UINT16"),
    ("FP16", 4, np.float16, "SRGBA64", "UINT16"),
    ("FP32", 1, np.float32, "VEC32F1", "FP32"),
    ("FP32", 2, np.float32, "VEC32F2", "FP32"),
    ("FP32", 4, np.float32, "VEC32F4", "FP32"),
]
ANSWER_NUMPY = {"UINT8": "uint8", "UINT16": "uint16", "FP32": "float32"}


@pytest.mark.parametrize(("datatype", "channels", "dtype", "image_format", "answer"), IMAGE_TABLE)
def test_image_through_a_calculator_keeps_its_bytes(
    client, datatype, channels, dtype, image_format, answer
) -> None:
    pixels = _pixels(dtype, (3, 5, channels))
    result = client.infer("image_echo", [_raw("image", pixels, datatype)])
    # The calculator got an ImageFrame in the format the table gives, as a [H, W, C] array.
    assert _report(result) == [image_format, 3, 5, channels, ANSWER_NUMPY[answer]]
    _assert_image_answer(result, "image_out", pixels, answer)


@pytest.mark.parametrize(("datatype", "channels", "dtype", "image_format", "answer"), IMAGE_TABLE)
def test_image_graph_input_as_its_output(
    client, datatype, channels, dtype, image_format, answer
) -> None:
    pixels = _pixels(dtype, (4, 2, channels))
    result = client.infer("image_direct", [_raw("image", pixels, datatype)])
    _assert_image_answer(result, "image", pixels, answer)


def _assert_image_answer(result, name: str, pixels: np.ndarray, datatype: str) -> None:
    response = result.get_response()
    (tensor,) = [t for t in response.outputs if t.name == name]
    assert (tensor.datatype, list(tensor.shape)) == (datatype, list(pixels.shape))
    assert result.as_numpy(name).tobytes() == pixels.tobytes()


@pytest.mark.parametrize(
    ("shape", "details"),
    [
        ([4, 3], "Invalid Mediapipe Image input shape size. Expected: 3; Actual: 2"),
        ([1, 2, 2, 3], "Invalid Mediapipe Image input shape size. Expected: 3; Actual: 4"),
        ([0, 2, 3], "Invalid Mediapipe Image input height. Expected greater than 0; Actual: 0"),
        ([2, 0, 3], "Invalid Mediapipe Image input width. Expected greater than 0; Actual: 0"),
        (
            [2, 2, 0],
            "Invalid Mediapipe Image input number of channels. Expected greater than 0; Actual: 0",
        ),
    ],
)
def test_image_shape_must_be_hwc_with_every_dimension_positive(stub, shape, details) -> None:
    pixels = np.zeros(shape, np.uint8)
    got = rpc_error(stub.ModelInfer, add_raw(request("image_echo"), "image", pixels, "UINT8"))
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, SHAPE, f"{details}; input name: image")


@pytest.mark.parametrize(
    ("datatype", "channels", "dtype"),
    [
        ("UINT8", 2, np.uint8),
        ("INT16", 2, np.int16),
        ("FP32", 3, np.float32),
        ("INT32", 3, np.int32),
        ("FP64", 1, np.float64),
        ("BOOL", 1, np.bool_),
    ],
)
def test_image_without_a_mediapipe_format_is_refused(stub, datatype, channels, dtype) -> None:
    pixels = np.zeros((2, 2, channels), dtype)
    got = rpc_error(stub.ModelInfer, add_raw(request("image_echo"), "image", pixels, datatype))
    details = f"no MediaPipe image format holds {datatype} with {channels} channels"
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, FORMAT, f"{details}; input name: image")


def test_image_in_typed_contents_is_refused(stub) -> None:
    message = add_typed(request("image_echo"), "image", np.ones((2, 2, 3), np.uint8))
    got = rpc_error(stub.ModelInfer, message)
    details = "IMAGE input image must be sent in raw_input_contents"
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, EXECUTION, details)


def test_image_output_must_carry_an_image(client) -> None:
    got = rpc_error(
        client.infer, "image_output_not_an_image", [tensor_input("in", np.ones(2, np.float32))]
    )
    details = "output stream out carries Tensor, not an ImageFrame"
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, EXECUTION, details)


# -- TENSOR (MediaPipe's tensor) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("datatype", "dtype"),
    [
        ("FP32", np.float32),
        ("FP16", np.float16),
        ("INT32", np.int32),
        ("INT8", np.int8),
        ("UINT8", np.uint8),
        ("BOOL", np.bool_),
    ],
)
def test_mediapipe_tensor_takes_its_datatypes(client, datatype, dtype) -> None:
    values = _pixels(np.uint8, (2, 3)).astype(dtype)
    result = client.infer("mp_tensor", [_raw("t", values, datatype)])
    (tensor,) = result.get_response().outputs
    assert (tensor.name, tensor.datatype, list(tensor.shape)) == ("t_out", datatype, [2, 3])
    assert result.as_numpy("t_out").tobytes() == values.tobytes()


@pytest.mark.parametrize(
    ("datatype", "dtype"),
    [("INT64", np.int64), ("INT16", np.int16), ("UINT16", np.uint16), ("FP64", np.float64)],
)
def test_mediapipe_tensor_refuses_other_datatypes(stub, datatype, dtype) -> None:
    message = add_raw(request("mp_tensor"), "t", np.ones((2, 3), dtype), datatype)
    details = (
        f"TENSOR inputs take FP32, FP16 (raw), INT32, INT8, UINT8 or BOOL; Actual: {datatype}; "
        "input name: t"
    )
    assert_status(
        rpc_error(stub.ModelInfer, message), grpc.StatusCode.INVALID_ARGUMENT, PRECISION, details
    )


def test_mediapipe_tensor_refuses_a_zero_dimension(stub) -> None:
    message = add_raw(request("mp_tensor"), "t", np.ones((0, 3), np.float32))
    details = "TENSOR inputs need every dimension > 0; Actual: (0,3); input name: t"
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, SHAPE, details)


def test_mediapipe_tensor_from_typed_contents(stub) -> None:
    values = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    response = stub.ModelInfer(add_typed(request("mp_tensor"), "t", values))
    (tensor,) = response.outputs
    assert (tensor.datatype, list(tensor.shape)) == ("INT32", [2, 3])
    assert response.raw_output_contents[0] == values.tobytes()


# -- OVTENSOR and untagged: OpenVINO tensors, any KServe datatype ----------------------------

OV_DATATYPES = [
    ("FP32", np.float32),
    ("FP64", np.float64),
    ("INT64", np.int64),
    ("INT16", np.int16),
    ("UINT16", np.uint16),
    ("UINT32", np.uint32),
    ("BOOL", np.bool_),
]


@pytest.mark.parametrize(("datatype", "dtype"), OV_DATATYPES)
def test_openvino_tensors_from_raw_contents(client, datatype, dtype) -> None:
    plain, ov = _pixels(np.uint8, (2, 2)).astype(dtype), _pixels(np.uint8, (3,)).astype(dtype)
    result = client.infer("ov_tensors", [_raw("plain", plain, datatype), _raw("ov", ov, datatype)])
    for name, sent in (("plain_out", plain), ("ov_out", ov)):
        (tensor,) = [t for t in result.get_response().outputs if t.name == name]
        assert (tensor.datatype, list(tensor.shape)) == (datatype, list(sent.shape))
        assert result.as_numpy(name).tobytes() == sent.tobytes()


@pytest.mark.parametrize(("datatype", "dtype"), OV_DATATYPES)
def test_openvino_tensors_from_typed_contents(stub, datatype, dtype) -> None:
    plain, ov = _pixels(np.uint8, (2, 2)).astype(dtype), _pixels(np.uint8, (3,)).astype(dtype)
    message = add_typed(add_typed(request("ov_tensors"), "plain", plain), "ov", ov)
    response = stub.ModelInfer(message)
    # Answers always go in raw_output_contents, whatever the request used.
    assert len(response.raw_output_contents) == 2
    for index, tensor in enumerate(response.outputs):
        sent = {"plain_out": plain, "ov_out": ov}[tensor.name]
        assert (tensor.datatype, list(tensor.shape)) == (datatype, list(sent.shape))
        assert response.raw_output_contents[index] == sent.tobytes()


def test_openvino_tensors_may_be_empty(client) -> None:
    empty = np.zeros((0, 3), np.float32)
    result = client.infer("ov_tensors", [_raw("plain", empty, "FP32"), _raw("ov", empty, "FP32")])
    assert result.as_numpy("plain_out").shape == (0, 3)
    assert result.as_numpy("ov_out").shape == (0, 3)


# -- REQUEST / RESPONSE passthrough ------------------------------------------------------------


def test_passthrough_calculator_answers_with_its_own_response(client) -> None:
    a, b = np.array([1.5, -2.5], np.float32), np.arange(6, dtype=np.int32).reshape(2, 3)
    result = client.infer(
        "passthrough",
        [tensor_input("a", a), tensor_input("b", b)],
        request_id="req-7",
        parameters={"OVMS_MP_TIMESTAMP": 1234},
    )
    np.testing.assert_array_equal(result.as_numpy("a"), a)
    np.testing.assert_array_equal(result.as_numpy("b"), b)
    response = result.get_response()
    parameters = response.parameters
    assert parameters["answered_by"].string_param == "kserve_echo"
    assert parameters["greeting"].string_param == "hello"  # the node's options
    assert parameters["inputs"].int64_param == 2
    # As OVMS does, the server names the graph, version and request id over the calculator's.
    assert (response.model_name, response.model_version, response.id) == (
        "passthrough",
        "1",
        "req-7",
    )
    assert parameters["OVMS_MP_TIMESTAMP"].int64_param == 1234


def test_passthrough_calculator_sees_typed_contents_as_sent(stub) -> None:
    values = np.array([[1, 2**40], [-3, 4]], np.int64)
    response = stub.ModelInfer(add_typed(request("passthrough", request_id="t"), "big", values))
    (tensor,) = response.outputs
    assert (tensor.name, tensor.datatype, list(tensor.shape)) == ("big", "INT64", [2, 2])
    assert list(tensor.contents.int64_contents) == values.reshape(-1).tolist()
    assert not response.raw_output_contents
    assert response.id == "t"


def test_passthrough_over_a_stream_answers_each_request(server) -> None:
    with Stream(server.url) as stream:
        for stamp in (10, 11):
            values = np.array([stamp], np.int32)
            stream.send("passthrough", [tensor_input("x", values)], timestamp=stamp)
            result = stream.result()
            np.testing.assert_array_equal(result.as_numpy("x"), values)
            assert timestamp_of(result) == stamp
            assert result.get_response().model_name == "passthrough"


def test_passthrough_response_must_be_a_model_infer_response(client) -> None:
    got = rpc_error(client.infer, "wrong_response", [tensor_input("x", np.ones(1, np.int32))])
    details = "output stream res carries ModelInferRequest, not a ModelInferResponse"
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, EXECUTION, details)


@pytest.mark.parametrize("graph", sorted(BROKEN_TAG_GRAPHS))
def test_passthrough_rules_are_checked_at_load(client, graph) -> None:
    _, message = BROKEN_TAG_GRAPHS[graph]
    assert not client.is_model_ready(graph)
    got = rpc_error(client.infer, graph, [tensor_input("in", np.ones(1, np.int32))])
    assert_status(got, grpc.StatusCode.UNAVAILABLE, NOT_LOADED, f"{graph}: {message}")


def test_every_other_tag_graph_loads(client) -> None:
    assert all(client.is_model_ready(graph) for graph in TAG_GRAPHS)


# -- Side packets from request parameters ------------------------------------------------------

SIDES = {"text": "hello", "number": -(2**40), "flag": True}


def _inspect(client, graph: str = "side_packets", **parameters):
    return client.infer(graph, [tensor_input("in", np.ones(1, np.float32))], **parameters)


def test_parameters_reach_a_calculator_as_side_packets_of_their_type(client) -> None:
    report = _report(_inspect(client, parameters={**SIDES, "OVMS_MP_TIMESTAMP": 5}))
    assert report["side_packets"] == {
        "TEXT": ["str", "hello"],
        "NUMBER": ["int", -(2**40)],
        "FLAG": ["bool", True],
    }
    assert report["input"] == "Tensor"  # an untagged graph input is an OpenVINO tensor


def test_an_optional_side_packet_may_be_missing(client) -> None:
    report = _report(_inspect(client, "optional_side_packets", parameters={"number": 7}))
    assert report["side_packets"] == {"NUMBER": ["int", 7]}


def test_a_side_packet_nobody_gives_stops_the_graph_start(client) -> None:
    got = rpc_error(_inspect, client, parameters={"text": "hello", "number": 1})
    details = (
        'node "inspect" needs input side packet "flag" (FLAG:0), which no node produces and the '
        "request does not carry as a parameter"
    )
    assert_status(got, grpc.StatusCode.UNKNOWN, "Failed to start mediapipe graph", details)


def test_a_float_parameter_is_not_implemented(client) -> None:
    got = rpc_error(_inspect, client, parameters={**SIDES, "ratio": 0.5})
    details = "Handling parameters of other types than: bool, string, int64 is not supported"
    assert_status(got, grpc.StatusCode.UNKNOWN, "Functionality not implemented", details)


def test_py_is_a_reserved_parameter_name(client) -> None:
    got = rpc_error(_inspect, client, parameters={**SIDES, "py": "mine"})
    details = "Incoming input side packet: py is special reserved name and cannot be used"
    base = "Failed to initialize mediapipe graph"
    assert_status(got, grpc.StatusCode.FAILED_PRECONDITION, base, details)


def test_a_side_packet_published_in_open_reaches_another_node(client) -> None:
    values = np.array([1, -2, 5], np.float32)
    result = client.infer("published_side_packet", [tensor_input("in", values)])
    np.testing.assert_array_equal(result.as_numpy("out"), values * 3)
