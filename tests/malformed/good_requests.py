"""The good request sent to a servable after each malformed one, and the check of its answer:
the server must still compute right, not merely answer."""

from __future__ import annotations

import numpy as np
from kserve_requests import NUMPY_DATATYPE as DATATYPES
from tritonclient.grpc import service_pb2 as pb

X = np.arange(10, dtype=np.float32).reshape(1, 10)
DYNAMIC = np.arange(6, dtype=np.float32).reshape(2, 3)
TEXTS = [b"ab", b"", b"xyz"]
TYPED = {  # input name -> values (the typed model adds 1; bool_out is not x)
    "int8": np.array([-3, 4], np.int8),
    "int16": np.array([-3, 4], np.int16),
    "int32": np.array([-3, 4], np.int32),
    "int64": np.array([-3, 4], np.int64),
    "uint8": np.array([3, 4], np.uint8),
    "uint16": np.array([3, 4], np.uint16),
    "uint32": np.array([3, 4], np.uint32),
    "uint64": np.array([3, 4], np.uint64),
    "fp64": np.array([0.5, -1.5], np.float64),
    "bool": np.array([True, False]),
}
NUMPY = {datatype: dtype for dtype, datatype in DATATYPES.items()}

# The servables the table targets (tests/rest/rest_servables.py builds them):
# add_one: FP32 [1,10] + 1; identity: FP32 [-1,-1] copied; strings: STRING [-1] twice;
# typed: one [-1] input per integer datatype, FP64 and BOOL; add_two: a pipeline adding 2;
# echo: a graph whose Python node returns its input.
TARGETS = ("add_one", "identity", "strings", "typed", "add_two", "echo")


def pack_strings(items: list[bytes]) -> bytes:
    """KServe's BYTES layout: each element as a 4-byte little-endian length and its bytes."""
    return b"".join(len(item).to_bytes(4, "little") + item for item in items)


def add_input(message: pb.ModelInferRequest, name: str, values: np.ndarray) -> pb.ModelInferRequest:
    message.inputs.add(name=name, datatype=DATATYPES[values.dtype], shape=values.shape)
    message.raw_input_contents.append(values.tobytes())
    return message


def good_request(target: str, request_id: str = "") -> pb.ModelInferRequest:
    message = pb.ModelInferRequest(model_name=target, id=request_id)
    if target in ("add_one", "add_two"):
        return add_input(message, "input", X)
    if target == "identity":
        return add_input(message, "input", DYNAMIC)
    if target == "echo":
        return add_input(message, "in", X)
    if target == "strings":
        message.inputs.add(name="text", datatype="BYTES", shape=[len(TEXTS)])
        message.raw_input_contents.append(pack_strings(TEXTS))
        return message
    assert target == "typed", target
    for name, values in TYPED.items():
        add_input(message, name, values)
    return message


def raw_outputs(response: pb.ModelInferResponse) -> dict[str, tuple[str, list[int], bytes]]:
    assert len(response.raw_output_contents) == len(response.outputs), response
    return {
        tensor.name: (tensor.datatype, list(tensor.shape), response.raw_output_contents[index])
        for index, tensor in enumerate(response.outputs)
    }


def _array(found: tuple[str, list[int], bytes]) -> np.ndarray:
    datatype, shape, data = found
    return np.frombuffer(data, NUMPY[datatype]).reshape(shape)


def check_good_answer(target: str, response: pb.ModelInferResponse) -> None:
    """``response`` is the right answer of ``target`` to ``good_request(target)``."""
    assert response.model_name == target, response.model_name
    outputs = raw_outputs(response)
    if target == "add_one":
        np.testing.assert_array_equal(_array(outputs["output"]), X + 1)
    elif target == "add_two":
        np.testing.assert_array_equal(_array(outputs["output"]), X + 2)
    elif target == "identity":
        np.testing.assert_array_equal(_array(outputs["output"]), DYNAMIC)
    elif target == "echo":
        np.testing.assert_array_equal(_array(outputs["out"]), X)
    elif target == "strings":
        assert outputs["twice"][:2] == ("BYTES", [2 * len(TEXTS)])
        assert outputs["twice"][2] == pack_strings(TEXTS + TEXTS)
        np.testing.assert_array_equal(_array(outputs["count"]), [len(TEXTS)])
    else:
        assert target == "typed", target
        assert len(outputs) == len(TYPED), sorted(outputs)
        for name, values in TYPED.items():
            expected = ~values if name == "bool" else values + values.dtype.type(1)
            np.testing.assert_array_equal(_array(outputs[f"{name}_out"]), expected)
