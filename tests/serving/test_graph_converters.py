"""PyTensorOvTensorConverterCalculator end to end: every numeric datatype at the graph's edges
and between Python nodes and a model, OVMS's refusals, indexed and list tags, parallel branches
and a stream.

Values cross the wire as raw bytes and are compared bit for bit, so BF16 and FP16 need no
client-side support.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import numpy as np
import pytest
from graph_streams import Stream, output_names, tensor_input, timestamp_of
from kserve_requests import assert_status, rpc_error
from serving_graphs_converters import BROKEN_GRAPHS, DATATYPES, bf16, write_converter_graphs
from serving_process import ServerProcess, served
from tritonclient.grpc import service_pb2 as pb

EXECUTION_ERROR = "Mediapipe execution failed. MP status"
NOT_LOADED = "Mediapipe is not loaded yet"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    config = write_converter_graphs(tmp_path_factory.mktemp("converter_graphs"))
    with served(config, tmp_path_factory.mktemp("converter_server")) as process:
        yield process


def raw_request(graph: str, inputs: dict[str, tuple[str, np.ndarray]]) -> pb.ModelInferRequest:
    """A request with every input in ``raw_input_contents``: name -> (datatype, values)."""
    message = pb.ModelInferRequest(model_name=graph)
    for name, (datatype, values) in inputs.items():
        message.inputs.add(name=name, datatype=datatype, shape=values.shape)
        message.raw_input_contents.append(np.ascontiguousarray(values).tobytes())
    return message


def outputs(response: pb.ModelInferResponse) -> dict[str, tuple[str, list[int], bytes]]:
    """Output name -> (datatype, shape, bytes)."""
    return {
        tensor.name: (tensor.datatype, list(tensor.shape), response.raw_output_contents[i])
        for i, tensor in enumerate(response.outputs)
    }


def extremes(datatype: str) -> np.ndarray:
    """A [2, 3] array of ``datatype`` with its smallest and largest values among others."""
    dtype = DATATYPES[datatype][1]
    if datatype == "BOOL":
        return np.array([[True, False, True], [False, False, True]])
    if datatype == "BF16":
        return bf16([[-3.0e38, -1.5, 0.0], [1.0, 2.5, 3.0e38]])
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    return np.array([[info.min, 0, 1], [2, info.max - 1, info.max]], dtype)


def small(datatype: str) -> np.ndarray:
    """A [2, 3] array of ``datatype`` whose values + 2 are exact (the CPU plugin computes
    64-bit integers in 32 bits)."""
    if datatype == "BOOL":
        return np.array([[True, False, True], [False, False, True]])
    values = [[0, 1, 2], [3, 4, 5]]
    return bf16(values) if datatype == "BF16" else np.array(values, DATATYPES[datatype][1])


def middle_answer(datatype: str, sent: np.ndarray) -> np.ndarray:
    """A ``middle_*`` graph's answer: the Python node adds one, the model adds one (BOOL: the
    model negates; BF16: only the model adds one)."""
    if datatype == "BOOL":
        return ~sent
    if datatype == "BF16":
        return bf16((sent.astype(np.uint32) << 16).view(np.float32) + 1)
    return sent + np.array(2, sent.dtype)


# ---- every datatype --------------------------------------------------------------------------


@pytest.mark.parametrize("datatype", list(DATATYPES))
def test_python_tensor_input_becomes_an_openvino_graph_output(stub, datatype) -> None:
    sent = extremes(datatype)
    response = stub.ModelInfer(raw_request("py_to_ov", {"in": (datatype, sent)}))
    # An OVTENSOR output is named by its stream.
    assert outputs(response) == {"out": (datatype, [2, 3], sent.tobytes())}


@pytest.mark.parametrize("datatype", list(DATATYPES))
def test_openvino_input_becomes_a_python_tensor_named_by_the_options(stub, datatype) -> None:
    sent = extremes(datatype)
    response = stub.ModelInfer(raw_request("ov_to_py", {"in": (datatype, sent)}))
    # An OVMS_PY_TENSOR output is named by its Tensor: tag_to_output_tensor_names gave "converted".
    assert outputs(response) == {"converted": (datatype, [2, 3], sent.tobytes())}


@pytest.mark.parametrize("datatype", list(DATATYPES))
def test_python_node_model_python_node_in_every_datatype(stub, datatype) -> None:
    sent = small(datatype)
    graph = f"middle_{datatype.lower()}"
    answer = outputs(stub.ModelInfer(raw_request(graph, {"in": (datatype, sent)})))
    assert answer["out"] == (datatype, [2, 3], middle_answer(datatype, sent).tobytes())
    seen = json.loads(answer["seen"][2])
    assert seen == {"name": "y", "datatype": datatype, "shape": [2, 3], "type": "Tensor"}


# ---- refusals --------------------------------------------------------------------------------


def _process_failure(node: str, message: str) -> str:
    return f'INVALID_ARGUMENT: Calculator::Process() for node "{node}" failed: {message}'


@pytest.mark.parametrize("datatype", ["BYTES", "MY_TYPE"])
def test_python_tensor_outside_the_numeric_datatypes_is_refused(stub, datatype) -> None:
    sent = np.frombuffer(b"\x03\x00\x00\x00abc", np.uint8)
    got = rpc_error(stub.ModelInfer, raw_request("py_to_ov", {"in": (datatype, sent)}))
    details = _process_failure("to_ov", f"Undefined precision in input python tensor: {datatype}")
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, EXECUTION_ERROR, details)


def test_bytes_openvino_tensor_is_refused(stub) -> None:
    sent = np.frombuffer(b"\x03\x00\x00\x00abc", np.uint8)
    got = rpc_error(stub.ModelInfer, raw_request("ov_to_py", {"in": ("BYTES", sent)}))
    details = _process_failure("to_py", "Undefined precision in input tensor: BYTES")
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, EXECUTION_ERROR, details)


def test_python_buffer_larger_than_its_shape_is_refused(stub) -> None:
    # The handler's Tensor holds 5 FP32 values (20 bytes) but says shape [2, 2] (16 bytes).
    sent = np.zeros(1, np.float32)
    got = rpc_error(stub.ModelInfer, raw_request("oversized", {"in": ("FP32", sent)}))
    details = _process_failure("to_ov", "python buffer size: 20; OV tensor size: 16; mismatch")
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, EXECUTION_ERROR, details)


def test_bf16_openvino_input_with_too_few_bytes_is_refused(stub) -> None:
    message = raw_request("ov_to_py", {"in": ("BF16", bf16([[1, 2, 3], [4, 5, 6]]))})
    message.raw_input_contents[0] = message.raw_input_contents[0][:-1]
    got = rpc_error(stub.ModelInfer, message)
    details = "Expected: 12 bytes; Actual: 11 bytes; input name: in"
    assert_status(
        got, grpc.StatusCode.INVALID_ARGUMENT, "Invalid content size of tensor proto", details
    )


@pytest.mark.parametrize("graph", sorted(BROKEN_GRAPHS))
def test_converter_node_with_a_bad_contract_is_not_loaded(stub, graph) -> None:
    _, reason = BROKEN_GRAPHS[graph]
    got = rpc_error(stub.ModelInfer, raw_request(graph, {"in": ("FP32", np.zeros(1, np.float32))}))
    details = f"{graph}: Failed to initialize mediapipe graph - {reason}"
    assert got == (grpc.StatusCode.UNAVAILABLE, f"{NOT_LOADED} - {details}")


# ---- beyond OVMS: several tensors per node ---------------------------------------------------


def test_indexed_tags_pair_up_and_take_their_names_from_the_options(stub) -> None:
    a = np.array([1, -2, 127], np.int8)
    b = np.array([[0.5], [-0.25]])
    response = stub.ModelInfer(raw_request("indexed", {"a": ("INT8", a), "b": ("FP64", b)}))
    assert outputs(response) == {
        "first": ("INT8", [3], a.tobytes()),
        "second": ("FP64", [2, 1], b.tobytes()),
    }


def test_list_tags_convert_whole_lists_both_ways(stub) -> None:
    # a, b -> [a, b] (Python list) -> OVTENSORS -> model -> [sum, diff] -> Python list -> outputs
    a = np.array([[1, 2, 3, 4]], np.float32)
    b = np.array([[10, 20, 30, 40]], np.float32)
    response = stub.ModelInfer(raw_request("lists", {"a": ("FP32", a), "b": ("FP32", b)}))
    answer = outputs(response)
    assert answer["sum"] == ("FP32", [1, 4], (a + b).tobytes())
    assert answer["diff"] == ("FP32", [1, 4], (a - b).tobytes())
    assert json.loads(answer["report"][2]) == [
        {"name": name, "datatype": "FP32", "shape": [1, 4], "type": "Tensor"}
        for name in ("sum", "diff")
    ]


# ---- parallel branches, streams --------------------------------------------------------------


def _branches_answer(x: np.ndarray) -> np.ndarray:
    """``branches``: [2x + 10, -x + 10], each branch a Python node and a model of its own."""
    return np.concatenate([x * 2 + 10, -x + 10])


def test_two_branches_from_one_input_join_at_the_end(stub) -> None:
    x = np.linspace(-4, 5, 10, dtype=np.float32).reshape(1, 10)
    response = stub.ModelInfer(raw_request("branches", {"in": ("FP32", x)}))
    assert outputs(response) == {"out": ("FP32", [2, 10], _branches_answer(x).tobytes())}


def test_one_stream_through_converters_answers_every_request(server) -> None:
    rng = np.random.default_rng(3)
    sent = [rng.integers(-50, 50, (1, 10)).astype(np.float32) for _ in range(5)]
    with Stream(server.url) as stream:
        for stamp, x in enumerate(sent, start=100):
            stream.send("branches", [tensor_input("in", x)], timestamp=stamp)
        answers = [stream.result() for _ in sent]
    assert [timestamp_of(a) for a in answers] == list(range(100, 105))
    for x, answer in zip(sent, answers, strict=True):
        np.testing.assert_array_equal(answer.as_numpy("out"), _branches_answer(x))


def test_one_stream_through_a_model_takes_a_new_shape_each_request(server) -> None:
    sent = [np.array([[1, 2]]), np.array([[7]]), np.arange(6).reshape(2, 3)]
    with Stream(server.url) as stream:
        for stamp, x in enumerate(sent):
            stream.send("middle_int32", [tensor_input("in", x.astype(np.int32))], stamp)
        # Each output packet is an answer of its own: "out" and "seen" per request.
        answers = [stream.result() for _ in range(2 * len(sent))]
    outs = {timestamp_of(a): a.as_numpy("out") for a in answers if output_names(a) == ["out"]}
    assert sorted(outs) == [0, 1, 2]
    for stamp, x in enumerate(sent):
        np.testing.assert_array_equal(outs[stamp], x + 2)
