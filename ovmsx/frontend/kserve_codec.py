"""ModelInferRequest bytes -> InferRequest, and InferResult -> ModelInferResponse bytes.

The tensor data never passes through protobuf objects: ``raw_input_contents`` is cut out of the
request as zero-copy views and ``raw_output_contents`` is appended to the serialized response in
one copy (see csrc/core/kserve_wire.h). Everything else is ordinary protobuf.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError

from ovmsx import _core
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.kserve_decode_errors import explain
from ovmsx.frontend.kserve_inputs import KServeInput, PackedStrings
from ovmsx.quoting import quote
from ovmsx.servables.graph_requests import TIMESTAMP_PARAMETER
from ovmsx.servables.infer_request import InferRequest, InferResult
from ovmsx.status import StatusCode, StatusError, status_error

# Field numbers of grpc_predict_v2.proto.
RAW_INPUT_CONTENTS = 7  # ModelInferRequest.raw_input_contents
RAW_OUTPUT_CONTENTS = 6  # ModelInferResponse.raw_output_contents
STREAM_INFER_RESPONSE = 2  # ModelStreamInferResponse.infer_response


def _parameter_value(parameter: pb.InferParameter) -> object:
    choice = parameter.WhichOneof("parameter_choice")
    return getattr(parameter, choice) if choice else None


def decode_infer_request(message: bytes) -> InferRequest:
    """The request in ``message``. Bytes that are no ModelInferRequest are the client's error,
    like any other request of the wrong format: INVALID_INPUT_FORMAT (gRPC INVALID_ARGUMENT)."""
    request, ranges, strings = _parse(message)
    view = memoryview(message)
    raw = [view[offset : offset + size] for offset, size in ranges]
    if raw:
        for tensor in request.inputs:
            if tensor.HasField("contents"):
                raise status_error(
                    StatusCode.INVALID_MESSAGE_STRUCTURE,
                    f"Detected buffer in InferInputTensor contents for input: {quote(tensor.name)}",
                )
        if len(raw) != len(request.inputs):
            raise status_error(
                StatusCode.INVALID_MESSAGE_STRUCTURE,
                f"Size of raw_input_contents: {len(raw)} is different than number of inputs: "
                f"{len(request.inputs)}",
            )
    inputs = [
        KServeInput(
            t.name,
            t.datatype,
            tuple(t.shape),
            raw[i] if raw else None,
            None if raw else t.contents,
            strings.get(i),
        )
        for i, t in enumerate(request.inputs)
    ]
    return InferRequest(
        servable_name=request.model_name,
        version=request.model_version,
        inputs=inputs,
        id=request.id,
        requested_outputs=[o.name for o in request.outputs],
        parameters={k: _parameter_value(v) for k, v in request.parameters.items()},
        message=message,
    )


def _parse(
    message: bytes,
) -> tuple[pb.ModelInferRequest, list[tuple[int, int]], dict[int, PackedStrings]]:
    """The protobuf fields, the ``raw_input_contents`` ranges, and each input's
    ``bytes_contents`` already packed (see csrc/core/kserve_bytes_contents.h)."""
    try:
        head, ranges = _core.split_field(message, RAW_INPUT_CONTENTS)
        head, packed = _core.split_bytes_contents(head)
        strings = {index: PackedStrings(count, data) for index, count, data in packed}
        return pb.ModelInferRequest.FromString(head), ranges, strings
    except DecodeError as error:
        failure = explain(message, pb.ModelInferRequest.DESCRIPTOR) or str(error)
    except StatusError as error:  # the core's wire reader: "malformed message at byte N: ..."
        failure = error.details
    # Raised outside the handlers: the new error neither chains the old one nor its frames.
    raise status_error(
        StatusCode.INVALID_INPUT_FORMAT, f"request is not a valid ModelInferRequest: {failure}"
    )


def encode_infer_response(result: InferResult, request_id: str) -> bytes:
    response = pb.ModelInferResponse(
        model_name=result.servable_name, model_version=str(result.version), id=request_id
    )
    for tensor in result.outputs:
        response.outputs.add(name=tensor.name, datatype=tensor.datatype, shape=tensor.shape)
    return _core.append_field(response.SerializeToString(), RAW_OUTPUT_CONTENTS, result.outputs)


def wrap_stream_response(response: bytes) -> bytes:
    """A ModelStreamInferResponse holding an encoded ModelInferResponse, in one copy (a
    message field is length-delimited on the wire, like the bytes fields above)."""
    return _core.append_field(b"", STREAM_INFER_RESPONSE, [_core.Tensor("", response)])


def encode_graph_response(
    graph: str, request_id: str, timestamp: int, outputs: list[tuple[str, _core.Tensor]]
) -> bytes:
    """A graph's answer: named outputs, version "1", and the packets' ``OVMS_MP_TIMESTAMP``
    (written by the core: the bytes protobuf would write, in a quarter of the time)."""
    return _core.encode_tensor_response(
        graph, "1", request_id, outputs, (TIMESTAMP_PARAMETER, timestamp)
    )


def encode_stream_error(message: str, request_id: str = "", servable_name: str = "") -> bytes:
    """A stream's error reply. As OVMS, ``infer_response`` names the request it answers (its
    ``id`` and ``model_name``) wherever the request could be read."""
    response = pb.ModelStreamInferResponse(error_message=message)
    if request_id or servable_name:
        response.infer_response.id = request_id
        response.infer_response.model_name = servable_name
    return response.SerializeToString()
