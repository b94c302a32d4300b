"""Requests that are broken below the KServe level, and the stream's error path."""

from __future__ import annotations

import grpc
import numpy as np
from kserve_requests import add_raw, add_typed, assert_status, output, request, rpc_error
from serving_models import TYPED_INPUTS
from tritonclient.grpc import service_pb2 as pb
from tritonclient.grpc import service_pb2_grpc

Stub = service_pb2_grpc.GRPCInferenceServiceStub
METHOD = "/inference.GRPCInferenceService/ModelInfer"
INPUT_FORMAT = "Inputs inside buffer does not match expected format."


def _send_bytes(server_url: str, message: bytes) -> tuple[grpc.StatusCode, str]:
    with grpc.insecure_channel(server_url) as channel:
        call = channel.unary_unary(METHOD)  # no serializers: the bytes go out as they are
        return rpc_error(call, message)


def test_a_message_that_is_not_protobuf_is_refused(server, stub: Stub) -> None:
    # Field 1 (model_name) holding bytes that are not UTF-8: not a valid ModelInferRequest.
    got = _send_bytes(server.url, b"\x0a\x02\xff\xfe")
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, INPUT_FORMAT, contains="ModelInferRequest")
    x = np.ones((1, 10), np.float32)
    np.testing.assert_array_equal(
        output(stub.ModelInfer(add_raw(request("add_one"), "input", x)), "output"), x + 1
    )


def test_a_truncated_message_is_refused(server) -> None:
    message = add_raw(request("add_one"), "input", np.ones((1, 10), np.float32))
    got = _send_bytes(server.url, message.SerializeToString()[:-7])
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, INPUT_FORMAT, contains="malformed message")


def test_narrow_integers_in_32_bit_fields_wrap_like_a_cast(stub: Stub) -> None:
    # int_contents carries INT8/INT16 as int32 and uint_contents UINT8/UINT16 as uint32; a
    # value out of the narrow type's range is cast (wrapped), not refused.
    message = request("typed")
    wrapped = {}
    for datatype, (_, np_type) in TYPED_INPUTS.items():
        name = datatype.lower()
        if datatype in ("INT8", "INT16"):
            values = np.array([300, -40000 if datatype == "INT16" else -200, 1, 2], np.int64)
            add_typed(message, name, values, datatype=datatype, field="int_contents")
            wrapped[name] = values.astype(np_type)
        elif datatype in ("UINT8", "UINT16"):
            values = np.array([256 + 5, 70000, 1, 2], np.uint64)
            add_typed(message, name, values, datatype=datatype, field="uint_contents")
            wrapped[name] = values.astype(np_type)
        else:
            add_typed(message, name, np.zeros(4, np_type))
    add_typed(message, "bool", np.zeros(4, np.bool_))
    response = stub.ModelInfer(message)
    for name, values in wrapped.items():
        np.testing.assert_array_equal(
            output(response, f"{name}_out"), values + values.dtype.type(1)
        )


def _stream_request(x: np.ndarray) -> pb.ModelInferRequest:
    return add_raw(request("dynamic"), "input", x)


def test_a_bad_request_in_a_stream_gets_its_error_and_the_stream_goes_on(stub: Stub) -> None:
    good = np.arange(6, dtype=np.float32).reshape(2, 3)
    bad = add_raw(request("dynamic"), "input", good, datatype="INT32")
    answers = list(stub.ModelStreamInfer(iter([_stream_request(good), bad, _stream_request(good)])))
    assert len(answers) == 3
    first, error, last = answers
    np.testing.assert_array_equal(output(first.infer_response, "output"), good + 1)
    assert error.error_message.startswith("Invalid input precision - Expected: FP32; Actual: INT32")
    np.testing.assert_array_equal(output(last.infer_response, "output"), good + 1)
