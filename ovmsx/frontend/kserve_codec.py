"""ModelInferRequest bytes -> InferRequest, and InferResult -> ModelInferResponse bytes.

The tensor data never passes through protobuf objects: ``raw_input_contents`` is cut out of the
request as zero-copy views and ``raw_output_contents`` is appended to the serialized response in
one copy (see csrc/core/kserve_wire.h). Everything else is ordinary protobuf.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError

from ovmsx import _core
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.kserve_inputs import KServeInput
from ovmsx.servables.graph_requests import TIMESTAMP_PARAMETER
from ovmsx.servables.infer_request import InferRequest, InferResult
from ovmsx.status import StatusCode, status_error

# Field numbers of grpc_predict_v2.proto.
RAW_INPUT_CONTENTS = 7  # ModelInferRequest.raw_input_contents
RAW_OUTPUT_CONTENTS = 6  # ModelInferResponse.raw_output_contents
STREAM_INFER_RESPONSE = 2  # ModelStreamInferResponse.infer_response


def _parameter_value(parameter: pb.InferParameter) -> object:
    choice = parameter.WhichOneof("parameter_choice")
    return getattr(parameter, choice) if choice else None


def decode_infer_request(message: bytes) -> InferRequest:
    head, ranges = _core.split_field(message, RAW_INPUT_CONTENTS)
    try:
        request = pb.ModelInferRequest.FromString(head)
    except DecodeError as error:
        raise status_error(
            StatusCode.INTERNAL_ERROR, f"request is not a valid ModelInferRequest: {error}"
        ) from None
    view = memoryview(message)
    raw = [view[offset : offset + size] for offset, size in ranges]
    if raw:
        for tensor in request.inputs:
            if tensor.HasField("contents"):
                raise status_error(
                    StatusCode.INVALID_MESSAGE_STRUCTURE,
                    f"Detected buffer in InferInputTensor contents for input: {tensor.name}",
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
    """A graph's answer: named outputs, version "1", and the packets' ``OVMS_MP_TIMESTAMP``."""
    response = pb.ModelInferResponse(model_name=graph, model_version="1", id=request_id)
    response.parameters[TIMESTAMP_PARAMETER].int64_param = timestamp
    for name, tensor in outputs:
        response.outputs.add(name=name, datatype=tensor.datatype, shape=tensor.shape)
    tensors = [tensor for _, tensor in outputs]
    return _core.append_field(response.SerializeToString(), RAW_OUTPUT_CONTENTS, tensors)


def encode_stream_error(message: str) -> bytes:
    return pb.ModelStreamInferResponse(error_message=message).SerializeToString()
