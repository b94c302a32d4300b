"""Every malformed ModelInfer gets OVMS's gRPC code and message, and breaks nothing.

Messages are ``"<OVMS base message> - <details>"`` (COMPAT §7.3); the details follow OVMS's
request validator ("Expected: ...; Actual: ...; input name: ...").
"""

from __future__ import annotations

import time

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from kserve_requests import add_raw, add_typed, assert_status, output, request, rpc_error
from ovms_messages import (
    BATCH,
    CONTENT_SIZE,
    INPUT_FORMAT,
    MISSING_INPUT,
    NAME_MISSING,
    NO_OF_DIMS,
    NO_OF_INPUTS,
    PRECISION,
    SHAPE,
    STRUCTURE,
    VALUE_COUNT,
    VERSION_INVALID,
    VERSION_MISSING,
)
from serving_models import TYPED_INPUTS
from serving_process import ServerProcess
from tritonclient.grpc import service_pb2, service_pb2_grpc

Stub = service_pb2_grpc.GRPCInferenceServiceStub

INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND

# How the details name the input (OVMS's text reads "input name: input name: input").
NAMED = "input name: input"

X = np.arange(10, dtype=np.float32).reshape(1, 10)


def _add_one(version: str = "", model: str = "add_one"):
    return add_raw(request(model, version), "input", X)


def _raw(shape, data: bytes | None = None, model: str = "add_one", datatype: str = "FP32"):
    values = np.zeros(shape, np.float32) if data is None else np.zeros(0, np.float32)
    return add_raw(request(model), "input", values, datatype, shape=shape, data=data)


def test_unknown_model(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _add_one(model="no_such_model"))
    assert_status(got, NOT_FOUND, NAME_MISSING)


def test_unknown_version(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _add_one("2"))
    assert_status(got, NOT_FOUND, VERSION_MISSING)


def test_negative_version_is_an_unknown_version(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _add_one("-1"))
    assert_status(got, NOT_FOUND, VERSION_MISSING)


@pytest.mark.parametrize("version", ["abc", "01", "1.5", "+1", "-0", "99999999999999999999"])
def test_invalid_version_format(client: grpcclient.InferenceServerClient, version: str) -> None:
    tensor = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
    got = rpc_error(client.infer, "add_one", [tensor], model_version=version)
    assert_status(got, INVALID, VERSION_INVALID)


def test_invalid_version_format_comes_before_the_name(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _add_one("abc", model="no_such_model"))
    assert_status(got, INVALID, VERSION_INVALID)


def test_missing_input_by_name(stub: Stub) -> None:
    message = add_raw(request("add_one"), "inputs", X)
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, MISSING_INPUT, "Required input: input")


def test_same_input_twice_leaves_the_other_missing(stub: Stub) -> None:
    a = np.zeros((1, 4), np.float32)
    message = add_raw(add_raw(request("two_inputs"), "a", a), "a", a)
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, MISSING_INPUT, "Required input: b")


def test_extra_input(stub: Stub) -> None:
    message = add_raw(_add_one(), "extra", X)
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, NO_OF_INPUTS, "Expected: 1; Actual: 2")


def test_no_inputs(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, request("add_one"))
    assert_status(got, INVALID, NO_OF_INPUTS, "Expected: 1; Actual: 0")


def test_too_few_inputs(stub: Stub) -> None:
    message = add_raw(request("two_inputs"), "a", np.zeros((1, 4), np.float32))
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, NO_OF_INPUTS, "Expected: 2; Actual: 1")


def test_wrong_shape(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _raw([1, 9]))
    assert_status(got, INVALID, SHAPE, "Expected: (1,10); Actual: (1,9)", contains=NAMED)


def test_wrong_batch(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _raw([2, 10]))
    assert_status(got, INVALID, BATCH, "Expected: 1; Actual: 2", contains=NAMED)


@pytest.mark.parametrize(("shape", "shown"), [([10], "(10)"), ([1, 10, 1], "(1,10,1)")])
def test_wrong_rank(stub: Stub, shape: list[int], shown: str) -> None:
    got = rpc_error(stub.ModelInfer, _raw(shape))
    assert_status(got, INVALID, NO_OF_DIMS, f"Expected: (1,10); Actual: {shown}", contains=NAMED)


def test_wrong_datatype(stub: Stub) -> None:
    message = add_raw(request("add_one"), "input", X.astype(np.int32))
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, PRECISION, "Expected: FP32; Actual: INT32", contains=NAMED)


def test_wrong_datatype_names_the_expected_side_as_ovms_does(stub: Stub) -> None:
    # OVMS writes the model's precision with its own names (I64, U8, ...) and checks the
    # inputs in name order: bool, fp64, int16, int32 pass, then int64 (sent as INT32) fails.
    message = request("typed")
    for datatype, (_, np_type) in TYPED_INPUTS.items():
        name = datatype.lower()
        add_raw(message, name, np.zeros(1, np.int32 if name == "int64" else np_type))
    add_raw(message, "bool", np.zeros(1, np.bool_))
    got = rpc_error(stub.ModelInfer, message)
    assert_status(
        got, INVALID, PRECISION, "Expected: I64; Actual: INT32", contains="input name: int64"
    )


def test_raw_contents_shorter_than_the_shape(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _raw([1, 10], data=X.tobytes()[:36]))
    assert_status(
        got, INVALID, CONTENT_SIZE, "Expected: 40 bytes; Actual: 36 bytes", contains=NAMED
    )


def test_raw_contents_longer_than_the_shape(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _raw([1, 10], data=X.tobytes() + b"\0\0\0\0"))
    assert_status(got, INVALID, CONTENT_SIZE, "Expected: 40 bytes; Actual: 44 bytes")


def test_typed_contents_with_too_few_values(stub: Stub) -> None:
    message = add_typed(request("add_one"), "input", X[:, :9], shape=[1, 10])
    got = rpc_error(stub.ModelInfer, message)
    assert_status(
        got, INVALID, VALUE_COUNT, "Expected: 10 values; Actual: 9 values", contains=NAMED
    )


def test_typed_contents_in_the_wrong_field(stub: Stub) -> None:
    # FP32 data is read from fp32_contents only; int_contents counts as no values at all.
    message = add_typed(request("add_one"), "input", X.astype(np.int32), "FP32", "int_contents")
    got = rpc_error(stub.ModelInfer, message)
    assert_status(
        got, INVALID, VALUE_COUNT, "Expected: 10 values; Actual: 0 values", contains=NAMED
    )


def test_no_data_at_all(stub: Stub) -> None:
    message = request("add_one")
    message.inputs.add(name="input", datatype="FP32", shape=[1, 10])
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, VALUE_COUNT, "Expected: 10 values; Actual: 0 values")


def test_both_raw_and_typed_contents(stub: Stub) -> None:
    message = _add_one()
    message.inputs[0].contents.fp32_contents.extend(X.reshape(-1).tolist())
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, STRUCTURE, contains="contents for input: input")


def test_raw_contents_next_to_an_empty_contents_message(stub: Stub) -> None:
    # OVMS checks has_contents(): a contents message that is present but empty counts.
    message = _add_one()
    message.inputs[0].contents.SetInParent()
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, STRUCTURE, contains="contents for input: input")


def test_fewer_raw_buffers_than_inputs(stub: Stub) -> None:
    message = add_raw(request("two_inputs"), "a", np.zeros((1, 4), np.float32))
    message.inputs.add(name="b", datatype="FP32", shape=[1, 4])
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, STRUCTURE, "Size of raw_input_contents: 1")


def test_negative_dims_on_a_static_model(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _raw([-1, 10], data=b""))
    assert_status(
        got,
        INVALID,
        SHAPE,
        "Negative or zero dimension size is not acceptable: (-1,10)",
        contains=NAMED,
    )


def test_negative_dims_on_a_dynamic_model(stub: Stub) -> None:
    got = rpc_error(stub.ModelInfer, _raw([2, -3], data=b"", model="dynamic"))
    assert_status(got, INVALID, SHAPE, "Negative or zero dimension size is not acceptable: (2,-3)")


def test_malformed_bytes_buffer(stub: Stub) -> None:
    # The first string claims 5 bytes, but only 2 follow.
    message = _raw([1], data=b"\x05\x00\x00\x00ab", model="strings", datatype="BYTES")
    message.inputs[0].name = "text"
    assert_status(rpc_error(stub.ModelInfer, message), INVALID, INPUT_FORMAT)


def test_bytes_count_differs_from_the_shape(stub: Stub) -> None:
    message = request("strings")
    message.inputs.add(name="text", datatype="BYTES", shape=[3]).contents.bytes_contents.extend(
        [b"a", b"b"]
    )
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, VALUE_COUNT, "Expected: 3 values; Actual: 2 values")


def _peak_virtual_memory(server: ServerProcess) -> int:
    """The server's VmPeak in kB: it would jump if it ever mapped the announced tensor."""
    with open(f"/proc/{server.process.pid}/status") as status:
        for line in status:
            if line.startswith("VmPeak:"):
                return int(line.split()[1])
    raise AssertionError("no VmPeak")


HUGE = [
    # (shape, how the data is sent, status base, details)
    ([2**40, 2**40], "raw", CONTENT_SIZE, "Shape dimensions overflow"),
    ([2**62, 4], "typed", CONTENT_SIZE, "Shape dimensions overflow"),
    ([2**31, 2**31], "raw", CONTENT_SIZE, f"Expected: {2**64} bytes; Actual: 40 bytes"),
    ([2**30, 2**30], "typed", VALUE_COUNT, f"Expected: {2**60} values; Actual: 10 values"),
]


@pytest.mark.parametrize(("shape", "how", "base", "details"), HUGE)
def test_huge_shapes_are_refused_without_allocating(
    server: ServerProcess, stub: Stub, shape: list[int], how: str, base: str, details: str
) -> None:
    before = _peak_virtual_memory(server)
    add = add_raw if how == "raw" else add_typed
    message = add(request("dynamic"), "input", X, shape=shape)
    start = time.monotonic()
    got = rpc_error(stub.ModelInfer, message)
    elapsed = time.monotonic() - start
    assert_status(got, INVALID, base, details, contains=NAMED)
    assert elapsed < 2.0
    assert server.process.poll() is None
    assert _peak_virtual_memory(server) - before < 512 * 1024  # kB: nothing near the shape
    assert stub.ServerLive(service_pb2.ServerLiveRequest()).live


def test_a_valid_request_still_succeeds_afterwards(stub: Stub) -> None:
    response = stub.ModelInfer(_add_one(version="1"))
    np.testing.assert_array_equal(output(response, "output"), X + 1)
