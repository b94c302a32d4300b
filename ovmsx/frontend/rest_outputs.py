"""An inference answer -> a KServe v2 REST response: JSON, and binary data where asked.

The JSON is OVMS's (``makeJsonFromPredictResponse`` in src/rest_utils.cpp): ``model_name``,
``id`` (when the request had one), ``model_version``, ``parameters`` (when there are any), then
``outputs``, each with ``name``, ``shape``, ``datatype`` and either ``data`` (a flat list) or
``parameters.binary_data_size`` with the bytes after the JSON, in output order. BYTES data is
a list of strings; beyond OVMS, FP16 and BF16 outputs are given as JSON numbers too.

Graphs answer with a serialized ModelInferResponse (as over gRPC); ``graph_outputs`` reads it
back into the same output form, its raw contents as views.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
import orjson

from ovmsx import _core, bytes_codec
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.kserve_codec import RAW_OUTPUT_CONTENTS
from ovmsx.frontend.rest_request import BINARY_DATA_SIZE, OutputFormat
from ovmsx.frontend.rest_response import RestResponse
from ovmsx.quoting import quote
from ovmsx.status import StatusCode, status_error
from ovmsx.tensor_bytes import raw_bytes

# numpy types of the datatypes a JSON output can hold (BYTES and BF16 are handled apart).
_DTYPES: dict[str, type] = {
    "BOOL": np.bool_,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
}
# InferTensorContents field of each datatype, for answers that carry typed contents.
_CONTENTS_FIELD = {
    "BOOL": "bool_contents",
    "INT8": "int_contents",
    "INT16": "int_contents",
    "INT32": "int_contents",
    "INT64": "int64_contents",
    "UINT8": "uint_contents",
    "UINT16": "uint_contents",
    "UINT32": "uint_contents",
    "UINT64": "uint64_contents",
    "FP32": "fp32_contents",
    "FP64": "fp64_contents",
}


class Output(NamedTuple):
    """One output tensor: its data in the KServe binary layout (BYTES: length-prefixed)."""

    name: str
    datatype: str
    shape: tuple[int, ...]
    data: memoryview


def tensor_outputs(tensors: Iterable[_core.Tensor]) -> list[Output]:
    return [Output(t.name, t.datatype, tuple(t.shape), raw_bytes(t)) for t in tensors]


def graph_outputs(answer: bytes) -> tuple[pb.ModelInferResponse, list[Output]]:
    """A graph's serialized ModelInferResponse: its fields, and its outputs."""
    head, ranges = _core.split_field(answer, RAW_OUTPUT_CONTENTS)
    response = pb.ModelInferResponse.FromString(head)
    view = memoryview(answer)
    outputs = []
    for index, tensor in enumerate(response.outputs):
        if index < len(ranges):
            offset, size = ranges[index]
            data = view[offset : offset + size]
        else:  # a RESPONSE packet may carry typed contents instead of raw ones
            data = _typed_data(tensor)
        outputs.append(Output(tensor.name, tensor.datatype, tuple(tensor.shape), data))
    return response, outputs


def encode_response(
    servable: str,
    version: str,
    request_id: str,
    parameters: dict[str, object],
    outputs: Iterable[Output],
    form: OutputFormat,
) -> RestResponse:
    document: dict[str, object] = {"model_name": servable}
    if request_id:
        document["id"] = request_id
    if version:
        document["model_version"] = version
    if parameters:
        document["parameters"] = parameters
    described = []
    tail: list[memoryview] = []
    for output in outputs:
        entry: dict[str, object] = {
            "name": output.name,
            "shape": list(output.shape),
            "datatype": output.datatype,
        }
        if form.binary(output.name):
            entry["parameters"] = {BINARY_DATA_SIZE: output.data.nbytes}
            tail.append(output.data)
        else:
            entry["data"] = _json_data(output)
        described.append(entry)
    document["outputs"] = described
    body = orjson.dumps(document, option=orjson.OPT_SERIALIZE_NUMPY)
    return RestResponse(200, body, tail, header_length=len(body) if tail else None)


def _json_data(output: Output) -> object:
    datatype = output.datatype
    dtype = _DTYPES.get(datatype)
    if dtype is not None:
        return np.frombuffer(output.data, dtype=dtype)
    if datatype == "BYTES":
        # JSON strings hold text: bytes that are not UTF-8 come out replaced (ask for binary
        # data to get them as they are).
        views = bytes_codec.unpack_views(output.data)
        return [bytes(view).decode("utf-8", "replace") for view in views]
    if datatype == "BF16":  # the upper half of an FP32
        halves = np.frombuffer(output.data, dtype=np.uint16).astype(np.uint32)
        return (halves << 16).view(np.float32)
    raise status_error(
        StatusCode.REST_UNSUPPORTED_PRECISION,
        f"output {quote(output.name)} of datatype {quote(datatype)} can only be sent as binary "
        "data",
    )


def _typed_data(tensor: pb.ModelInferResponse.InferOutputTensor) -> memoryview:
    contents = tensor.contents
    if tensor.datatype == "BYTES":
        return memoryview(bytes_codec.pack(list(contents.bytes_contents)))
    field = _CONTENTS_FIELD.get(tensor.datatype)
    if field is None:
        return memoryview(b"")
    values = np.asarray(getattr(contents, field)).astype(_DTYPES[tensor.datatype])
    return memoryview(values.tobytes())
