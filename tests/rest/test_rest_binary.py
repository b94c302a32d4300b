"""The KServe binary-data extension over plain HTTP: binary inputs, binary outputs, and the
errors of OVMS's ``handleBinaryInputs``."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from rest_process import Reply, RestProcess

HEADER = "Inference-Header-Content-Length"


def _post(rest: RestProcess, model: str, document: dict, tail: bytes = b"", header=None) -> Reply:
    text = json.dumps(document).encode()
    length = str(len(text)) if header is None else header
    return rest.request("POST", f"/v2/models/{model}/infer", text + tail, headers={HEADER: length})


def _binary_input(name: str, shape: list[int], datatype: str, size: int) -> dict:
    return {"name": name, "shape": shape, "datatype": datatype,
            "parameters": {"binary_data_size": size}}  # fmt: skip


def _split(reply: Reply) -> tuple[dict, bytes]:
    length = int(reply.headers["inference-header-content-length"])
    return json.loads(reply.body[:length]), reply.body[length:]


def test_binary_in_and_out(rest: RestProcess) -> None:
    data = np.arange(10, dtype=np.float32).reshape(1, 10)
    document = {
        "inputs": [_binary_input("input", [1, 10], "FP32", data.nbytes)],
        "parameters": {"binary_data_output": True},
    }
    reply = _post(rest, "add_one", document, data.tobytes())
    assert reply.status == 200, reply.body
    answer, tail = _split(reply)
    (output,) = answer["outputs"]
    assert output == {
        "name": "output",
        "shape": [1, 10],
        "datatype": "FP32",
        "parameters": {"binary_data_size": 40},
    }
    np.testing.assert_array_equal(np.frombuffer(tail, np.float32), data.ravel() + 1)


def test_binary_input_json_output(rest: RestProcess) -> None:
    data = np.full((1, 10), 2.5, np.float32)
    document = {"inputs": [_binary_input("input", [1, 10], "FP32", data.nbytes)]}
    reply = _post(rest, "add_one", document, data.tobytes())
    assert reply.status == 200, reply.body
    assert "inference-header-content-length" not in reply.headers
    assert reply.json()["outputs"][0]["data"] == [3.5] * 10


def test_the_size_follows_from_shape_and_datatype(rest: RestProcess) -> None:
    data = np.ones((1, 10), np.float32)
    document = {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32"}]}
    reply = _post(rest, "add_one", document, data.tobytes())
    assert reply.status == 200, reply.body
    assert reply.json()["outputs"][0]["data"] == [2.0] * 10


def test_each_output_chooses_its_form(rest: RestProcess) -> None:
    a = np.array([[1, 2, 3, 4]], np.float32)
    b = np.array([[4, 3, 2, 1]], np.float32)
    document = {
        "inputs": [_binary_input("a", [1, 4], "FP32", 16), _binary_input("b", [1, 4], "FP32", 16)],
        "outputs": [
            {"name": "sum", "parameters": {"binary_data": False}},
            {"name": "diff", "parameters": {"binary_data": True}},
        ],
    }
    reply = _post(rest, "two_inputs", document, a.tobytes() + b.tobytes())
    assert reply.status == 200, reply.body
    answer, tail = _split(reply)
    total, difference = answer["outputs"]
    assert (total["name"], total["data"]) == ("sum", [5.0] * 4)
    assert (difference["name"], difference["parameters"]) == ("diff", {"binary_data_size": 16})
    np.testing.assert_array_equal(np.frombuffer(tail, np.float32), (a - b).ravel())


def test_binary_data_output_false_is_json(rest: RestProcess) -> None:
    document = {
        "inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32", "data": [0] * 10}],
        "parameters": {"binary_data_output": False},
    }
    assert rest.infer("add_one", document).json()["outputs"][0]["data"] == [1.0] * 10


@pytest.mark.parametrize("value", ["true", 1, None, {"x": True}])
def test_binary_data_output_not_a_boolean_is_ignored(rest: RestProcess, value: object) -> None:
    """OVMS reads the flag as a boolean parameter, which anything but true leaves false: the
    answer is JSON, and no error."""
    document = {
        "inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32", "data": [0] * 10}],
        "parameters": {"binary_data_output": value},
    }
    if isinstance(value, dict):  # an object is no KServe parameter at all
        reply = rest.infer("add_one", document)
        assert reply.status == 400
        assert reply.error.startswith("Could not parse request parameters")
        return
    if value is None:
        document["outputs"] = [{"name": "output", "parameters": {"binary_data": "yes"}}]
        del document["parameters"]
    reply = rest.infer("add_one", document)
    assert reply.status == 200, reply.body
    assert "inference-header-content-length" not in reply.headers
    assert reply.json()["outputs"][0]["data"] == [1.0] * 10


def test_json_and_binary_inputs_are_not_mixed(rest: RestProcess) -> None:
    """OVMS keeps binary inputs apart from JSON ones, and refuses a request with both."""
    a = np.array([[1, 2, 3, 4]], np.float32)
    document = {
        "inputs": [
            _binary_input("a", [1, 4], "FP32", 16),
            {"name": "b", "shape": [1, 4], "datatype": "FP32", "data": [4, 3, 2, 1]},
        ]
    }
    reply = _post(rest, "two_inputs", document, a.tobytes())
    assert reply.status == 400
    assert reply.error == (
        "Passing buffers both in ModelInferRequest::InferInputTensor::contents and in "
        "ModelInferRequest::raw_input_contents is not allowed - input a is binary data, "
        "input b is JSON data"
    )


def _packed(*items: bytes) -> bytes:
    return b"".join(struct.pack("<I", len(item)) + item for item in items)


def test_strings_as_binary(rest: RestProcess) -> None:
    tail = _packed(b"ab", b"\x00\xffbinary")
    document = {
        "inputs": [_binary_input("text", [2], "BYTES", len(tail))],
        "outputs": [{"name": "twice", "parameters": {"binary_data": True}}],
    }
    reply = _post(rest, "strings", document, tail)
    assert reply.status == 200, reply.body
    answer, data = _split(reply)
    assert answer["outputs"][0]["datatype"] == "BYTES"
    assert data == tail + tail  # the length-prefixed layout, both ways


def test_a_sole_string_of_shape_1_takes_the_whole_tail(rest: RestProcess) -> None:
    tail = _packed(b"whole")
    document = {"inputs": [{"name": "text", "shape": [1], "datatype": "BYTES"}]}
    reply = _post(rest, "strings", document, tail)
    assert reply.status == 200, reply.body
    outputs = {o["name"]: o for o in reply.json()["outputs"]}
    assert outputs["twice"]["data"] == ["whole", "whole"]


def test_strings_whose_size_cannot_be_told_are_refused(rest: RestProcess) -> None:
    tail = _packed(b"a", b"b")
    document = {"inputs": [{"name": "text", "shape": [2], "datatype": "BYTES"}]}
    reply = _post(rest, "strings", document, tail)
    assert reply.status == 400
    assert reply.error.startswith("Could not parse input content. Not valid ndarray detected")


def test_binary_data_of_every_datatype_through_a_python_graph(rest: RestProcess) -> None:
    """Including BF16, which JSON cannot carry, and a datatype KServe does not define."""
    cases = {
        "BF16": np.array([0x3F80, 0xC000], np.uint16).tobytes(),  # 1.0, -2.0
        "FP16": np.array([0.5, 2.0], np.float16).tobytes(),
        "UINT64": np.array([1, 2**64 - 1], np.uint64).tobytes(),
        "BYTES": _packed(b"x", b"yz"),
        "2xU8": bytes([1, 2, 3, 4]),
    }
    for datatype, raw in cases.items():
        document = {
            "inputs": [_binary_input("in", [2], datatype, len(raw))],
            "parameters": {"binary_data_output": True},
        }
        reply = _post(rest, "echo", document, raw)
        assert reply.status == 200, (datatype, reply.body)
        answer, tail = _split(reply)
        (output,) = answer["outputs"]
        assert (output["datatype"], output["shape"]) == (datatype, [2])
        assert tail == raw, datatype


def test_bf16_output_as_json_numbers(rest: RestProcess) -> None:
    raw = np.array([0x3F80, 0xC000], np.uint16).tobytes()
    reply = _post(rest, "echo", {"inputs": [_binary_input("in", [2], "BF16", 4)]}, raw)
    assert reply.json()["outputs"][0]["data"] == [1.0, -2.0]


def test_a_custom_datatype_cannot_be_json(rest: RestProcess) -> None:
    reply = _post(rest, "echo", {"inputs": [_binary_input("in", [2], "2xU8", 4)]}, bytes(4))
    assert reply.status == 400
    assert reply.error.startswith("Could not parse input content. Unsupported data precision")


def test_a_large_binary_request(rest: RestProcess) -> None:
    data = np.random.default_rng(0).random((4, 2**19), dtype=np.float32)  # 8 MiB
    document = {
        "inputs": [_binary_input("input", list(data.shape), "FP32", data.nbytes)],
        "parameters": {"binary_data_output": True},
    }
    reply = _post(rest, "identity", document, data.tobytes())
    assert reply.status == 200
    answer, tail = _split(reply)
    assert answer["outputs"][0]["shape"] == [4, 2**19]
    assert tail == data.tobytes()


# (case, model, document, tail, header, HTTP status, start of the error message)
ERRORS = [
    ("size does not match the shape", "add_one",
     {"inputs": [_binary_input("input", [1, 10], "FP32", 36)]}, bytes(36), None, 400,
     "Invalid content size of tensor proto - Expected: 40 bytes; Actual: 36 bytes"),
    ("size beyond the body", "add_one",
     {"inputs": [_binary_input("input", [1, 10], "FP32", 80)]}, bytes(40), None, 400,
     "Received buffer size is smaller than binary_data_size parameter indicates"),
    ("no binary data at all", "add_one",
     {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32"}]}, b"", None, 400,
     "Received buffer size is smaller than binary_data_size parameter indicates"),
    ("negative size", "add_one",
     {"inputs": [_binary_input("input", [1, 10], "FP32", -40)]}, bytes(40), None, 400,
     "binary_data_size parameter is invalid and cannot be parsed"),
    ("size as a string", "add_one",
     {"inputs": [_binary_input("input", [1, 10], "FP32", "40")]}, bytes(40), None, 400,
     "binary_data_size parameter is invalid and cannot be parsed"),
    ("both data and binary", "add_one",
     {"inputs": [{**_binary_input("input", [1, 10], "FP32", 40), "data": [1] * 10}]},
     bytes(40), None, 500, "Request contains values both in binary data and in content value"),
    ("header beyond the body", "add_one",
     {"inputs": [_binary_input("input", [1, 10], "FP32", 40)]}, bytes(40), "100000", 500,
     "Inference-Header-Content-Length header exceeds the size of the request body"),
    ("header not a number", "add_one",
     {"inputs": [_binary_input("input", [1, 10], "FP32", 40)]}, bytes(40), "ten", 500,
     "Inference-Header-Content-Length header is invalid and couldn't be parsed"),
    ("header cutting the JSON", "add_one",
     {"inputs": [_binary_input("input", [1, 10], "FP32", 40)]}, bytes(40), "10", 412,
     "The file is not valid json"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("model", "document", "tail", "header", "status", "message"),
    [case[1:] for case in ERRORS],
    ids=[case[0] for case in ERRORS],
)
def test_errors(rest: RestProcess, model, document, tail, header, status, message) -> None:
    reply = _post(rest, model, document, tail, header)
    assert reply.status == status, reply.body
    assert reply.error.startswith(message), reply.error
