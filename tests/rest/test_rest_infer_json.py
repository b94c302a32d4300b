"""Inference with JSON data over plain HTTP: every datatype, the answer's fields, and every
error a request's JSON can cause, with OVMS's messages and HTTP codes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import serving_models as sm
from rest_process import RestProcess

ONES = list(range(1, 11))


def _input(name: str, shape: list[int], datatype: str, data: object, **extra) -> dict:
    return {"name": name, "shape": shape, "datatype": datatype, "data": data, **extra}


def test_add_one(rest: RestProcess) -> None:
    reply = rest.infer("add_one", {"inputs": [_input("input", [1, 10], "FP32", ONES)]})
    assert reply.status == 200, reply.body
    assert reply.headers["content-type"] == "application/json"
    assert "inference-header-content-length" not in reply.headers
    assert reply.json() == {
        "model_name": "add_one",
        "model_version": "1",
        "outputs": [
            {
                "name": "output",
                "shape": [1, 10],
                "datatype": "FP32",
                "data": [v + 1.0 for v in ONES],
            }
        ],
    }


def test_nested_data_and_the_request_id(rest: RestProcess) -> None:
    document = {"id": "req-7", "inputs": [_input("input", [1, 10], "FP32", [ONES])]}
    answer = rest.infer("add_one", document).json()
    assert answer["id"] == "req-7"
    assert answer["outputs"][0]["data"] == [v + 1.0 for v in ONES]


def test_versions_answer_with_their_own_number(rest: RestProcess) -> None:
    document = {"inputs": [_input("input", [1, 10], "FP32", [0] * 10)]}
    for version, added in (("1", 1.0), ("2", 2.0), (None, 2.0)):
        answer = rest.infer("versioned", document, version).json()
        assert answer["model_version"] == (version or "2")
        assert answer["outputs"][0]["data"] == [added] * 10


@pytest.mark.parametrize("datatype", sorted(sm.TYPED_INPUTS))
def test_every_numeric_datatype_to_a_model(rest: RestProcess, datatype: str) -> None:
    """typed: each input gives itself + 1 in its own datatype."""
    _, numpy_type = sm.TYPED_INPUTS[datatype]
    values = [0, 1, 5, 7] if datatype != "FP64" else [0.5, 1.25, -3.0, 7.75]
    if datatype.startswith("INT"):
        values[2] = -5
    inputs = [
        _input(name.lower(), [4], name, values if name == datatype else [0, 0, 0, 0])
        for name in sm.TYPED_INPUTS
    ]
    inputs.append(_input("bool", [4], "BOOL", [True, False, True, False]))
    reply = rest.infer("typed", {"inputs": inputs})
    assert reply.status == 200, reply.body
    outputs = {o["name"]: o for o in reply.json()["outputs"]}
    mine = outputs[f"{datatype.lower()}_out"]
    assert (mine["datatype"], mine["shape"]) == (datatype, [4])
    assert mine["data"] == (np.array(values, numpy_type) + 1).tolist()
    assert outputs["bool_out"]["data"] == [False, True, False, True]


def test_fp16_as_json_numbers(rest: RestProcess) -> None:
    """Beyond OVMS, which takes FP16 only as binary data."""
    reply = rest.infer("half", {"inputs": [_input("input", [3], "FP16", [0.5, -2, 1024.0])]})
    assert reply.status == 200, reply.body
    (output,) = reply.json()["outputs"]
    assert (output["datatype"], output["data"]) == ("FP16", [0.5, -2.0, 1024.0])


def test_strings(rest: RestProcess) -> None:
    reply = rest.infer("strings", {"inputs": [_input("text", [2], "BYTES", ["ab", "żółw"])]})
    assert reply.status == 200, reply.body
    outputs = {o["name"]: o for o in reply.json()["outputs"]}
    assert outputs["twice"]["datatype"] == "BYTES"
    assert outputs["twice"]["data"] == ["ab", "żółw", "ab", "żółw"]
    assert (outputs["count"]["datatype"], outputs["count"]["data"]) == ("INT64", [2])


GRAPH_CASES = {
    "BOOL": [True, False, True],
    "UINT8": [0, 200, 255],
    "UINT16": [0, 40000, 65535],
    "UINT32": [0, 1, 4294967295],
    "UINT64": [0, 1, 18446744073709551615],
    "INT8": [-128, 0, 127],
    "INT16": [-32768, 1, 32767],
    "INT32": [-(2**31), 1, 2**31 - 1],
    "INT64": [-(2**63), 1, 2**63 - 1],
    "FP16": [0.5, -1.5, 65504.0],
    "FP32": [0.25, -1.5, 3.0e38],
    "FP64": [0.1, -1e300, 2.5],
    "BYTES": ["a", "", "zwölf"],
}


@pytest.mark.parametrize("datatype", sorted(GRAPH_CASES))
def test_every_datatype_round_trips_through_a_python_graph(rest: RestProcess, datatype: str):
    values = GRAPH_CASES[datatype]
    reply = rest.infer("echo", {"inputs": [_input("in", [3], datatype, values)]})
    assert reply.status == 200, reply.body
    answer = reply.json()
    assert (answer["model_name"], answer["model_version"]) == ("echo", "1")
    assert isinstance(answer["parameters"]["OVMS_MP_TIMESTAMP"], int)
    (output,) = answer["outputs"]
    assert (output["name"], output["datatype"], output["shape"]) == ("out", datatype, [3])
    assert output["data"] == values


def test_a_graph_timestamp_from_the_request(rest: RestProcess) -> None:
    document = {
        "parameters": {"OVMS_MP_TIMESTAMP": 1234},
        "inputs": [_input("in", [1], "INT32", [1])],
    }
    assert rest.infer("echo", document).json()["parameters"]["OVMS_MP_TIMESTAMP"] == 1234


def test_a_pipeline(rest: RestProcess) -> None:
    reply = rest.infer("add_two", {"inputs": [_input("input", [1, 10], "FP32", ONES)]})
    assert reply.status == 200, reply.body
    answer = reply.json()
    assert (answer["model_name"], answer["model_version"]) == ("add_two", "1")
    assert answer["outputs"][0]["data"] == [v + 2.0 for v in ONES]


def test_a_graph_taking_the_whole_request(rest: RestProcess) -> None:
    document = {
        "id": "whole",
        "parameters": {"note": "kept"},
        "inputs": [
            _input("first", [2], "INT32", [1, 2]),
            _input("second", [1], "BYTES", ["text"]),
        ],
    }
    reply = rest.infer("passthrough", document)
    assert reply.status == 200, reply.body
    answer = reply.json()
    assert answer["id"] == "whole"
    assert answer["parameters"]["seen_id"] == "whole"
    assert answer["parameters"]["note"] == "kept"
    outputs = {o["name"]: o for o in answer["outputs"]}
    assert outputs["first"]["data"] == [1, 2]
    assert outputs["second"]["data"] == ["text"]


def test_requested_outputs_only(rest: RestProcess) -> None:
    document = {
        "inputs": [
            _input("a", [1, 4], "FP32", [1, 2, 3, 4]),
            _input("b", [1, 4], "FP32", [1, 1, 1, 1]),
        ],
        "outputs": [{"name": "diff"}],
    }
    (output,) = rest.infer("two_inputs", document).json()["outputs"]
    assert (output["name"], output["data"]) == ("diff", [0.0, 1.0, 2.0, 3.0])


# (case, model, document, HTTP status, start of the error message)
ERRORS = [
    ("unknown model", "nothing", {"inputs": [_input("input", [1, 10], "FP32", ONES)]}, 404,
     "Model with requested name is not found"),
    ("shape", "add_one", {"inputs": [_input("input", [1, 9], "FP32", ONES[:9])]}, 400,
     "Invalid input shape - Expected: (1,10); Actual: (1,9); input name: input"),
    ("rank", "add_one", {"inputs": [_input("input", [10], "FP32", ONES)]}, 400,
     "Invalid number of shape dimensions"),
    ("precision", "add_one", {"inputs": [_input("input", [1, 10], "INT32", ONES)]}, 400,
     "Invalid input precision - Expected: FP32; Actual: INT32; input name: input"),
    ("value count", "add_one", {"inputs": [_input("input", [1, 10], "FP32", ONES[:9])]}, 400,
     "Invalid number of values in tensor proto container - Expected: 10 values; Actual: 9"),
    ("missing input", "two_inputs", {"inputs": [_input("a", [1, 4], "FP32", [1] * 4),
                                                _input("c", [1, 4], "FP32", [1] * 4)]}, 400,
     "Missing input with specific name - Required input: b"),
    ("input count", "add_one", {"inputs": [_input("input", [1, 10], "FP32", ONES),
                                           _input("extra", [1], "FP32", [1])]}, 400,
     "Invalid number of inputs - Expected: 1; Actual: 2"),
    ("unknown output", "add_one", {"inputs": [_input("input", [1, 10], "FP32", ONES)],
                                   "outputs": [{"name": "nope"}]}, 400,
     "Missing output with specific name"),
    ("body not an object", "add_one", [1, 2], 400, "Request body should be JSON object"),
    ("no inputs", "add_one", {"id": "x"}, 400, "Invalid JSON structure, missing inputs"),
    ("empty inputs", "add_one", {"inputs": []}, 400, "Invalid JSON structure, missing inputs"),
    ("inputs not a list", "add_one", {"inputs": {"name": "input"}}, 400,
     "Could not parse input content. Not valid ndarray detected"),
    ("input without a name", "add_one", {"inputs": [{"shape": [1], "datatype": "FP32",
                                                     "data": [1]}]}, 400,
     "Could not parse input content"),
    ("negative dimension", "add_one", {"inputs": [_input("input", [1, -10], "FP32", ONES)]}, 400,
     "Could not parse input content"),
    ("data not a list", "add_one", {"inputs": [_input("input", [1, 10], "FP32", 5)]}, 400,
     "Could not parse input content"),
    ("strings for numbers", "add_one", {"inputs": [_input("input", [1, 10], "FP32",
                                                          ["1"] * 10)]}, 400,
     "Could not parse input content. Not valid ndarray detected - FP32 data must be numbers"),
    ("booleans for numbers", "add_one", {"inputs": [_input("input", [1, 10], "FP32",
                                                           [True] * 10)]}, 400,
     "Could not parse input content"),
    ("floats for integers", "typed", {"inputs": [_input("int32", [1], "INT32", [1.5])]}, 400,
     "Could not parse input content. Not valid ndarray detected - INT32 data must be integers"),
    ("out of range", "typed", {"inputs": [_input("int8", [1], "INT8", [300])]}, 400,
     "Could not parse input content. Not valid ndarray detected - a value does not fit INT8"),
    ("numbers for strings", "strings", {"inputs": [_input("text", [1], "BYTES", [1])]}, 400,
     "Could not parse input content. Not valid ndarray detected - BYTES data must be strings"),
    ("BF16 as JSON", "echo", {"inputs": [_input("in", [1], "BF16", [1.0])]}, 400,
     "Could not parse input content"),
    ("unknown datatype", "echo", {"inputs": [_input("in", [1], "FP8", [1.0])]}, 400,
     "Could not parse input content. Unsupported data precision detected"),
    ("id not a string", "add_one", {"id": 5, "inputs": [_input("input", [1, 10], "FP32",
                                                                ONES)]}, 400,
     "Could not parse input content"),
    ("bad parameter", "add_one", {"parameters": {"x": 1.5},
                                  "inputs": [_input("input", [1, 10], "FP32", ONES)]}, 400,
     "Could not parse request parameters"),
    ("bad outputs", "add_one", {"outputs": [{"id": 1}],
                                "inputs": [_input("input", [1, 10], "FP32", ONES)]}, 400,
     "Could not parse output content."),
    ("pipeline shape", "add_two", {"inputs": [_input("input", [1, 2], "FP32", [1, 2])]}, 400,
     "Invalid input shape"),
    ("graph input", "echo", {"inputs": [_input("other", [1], "FP32", [1])]}, 400,
     "Unexpected input"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("model", "document", "status", "message"),
    [case[1:] for case in ERRORS],
    ids=[case[0] for case in ERRORS],
)
def test_errors(rest: RestProcess, model: str, document: object, status: int, message: str):
    reply = rest.infer(model, document)
    assert reply.status == status, reply.body
    assert reply.headers["content-type"] == "application/json"
    assert reply.error.startswith(message), reply.error


def test_unknown_version(rest: RestProcess) -> None:
    document = {"inputs": [_input("input", [1, 10], "FP32", ONES)]}
    reply = rest.infer("add_one", document, version="5")
    assert reply.status == 404
    assert reply.error.startswith("Model with requested version is not found")


@pytest.mark.parametrize("body", [b"{", b"not json", b"", b'{"inputs": [}', b'{"a": 1}x'])
def test_malformed_json_is_the_clients_error(rest: RestProcess, body: bytes) -> None:
    """OVMS's JSON_INVALID: HTTP 412, a client error, with where the parser stopped."""
    reply = rest.request("POST", "/v2/models/add_one/infer", body)
    assert reply.status == 412
    assert reply.error.startswith("The file is not valid json - Error: ")
    assert "Offset: " in reply.error


def test_the_server_keeps_serving_after_bad_requests(rest: RestProcess) -> None:
    for body in (b"\xff\xfe", json.dumps({"inputs": [[[]]]}).encode()):
        assert 400 <= rest.request("POST", "/v2/models/add_one/infer", body).status < 500
    # Too deep: OVMS's JSON_NESTING_DEPTH_EXCEEDED is a 500.
    deep = b"[" * 5000 + b"]" * 5000
    assert rest.request("POST", "/v2/models/add_one/infer", deep).status == 500
    document = {"inputs": [_input("input", [1, 10], "FP32", ONES)]}
    assert rest.infer("add_one", document).status == 200
