"""The malformed gRPC requests: each a row with the servable it targets, the request as the
bytes on the wire, and the exact code and message the server must answer with.

Messages are OVMS's base text (COMPAT §7.3) and ovmsx's details after " - ", compared whole;
where a part varies with the bytes sent (a byte offset inside a broken message), the row gives
a regular expression that names that part and fixes the rest.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import grpc
import numpy as np
from good_requests import DATATYPES, TYPED, X, good_request
from kserve_requests import CONTENTS_FIELD
from ovms_messages import (
    INPUT_FORMAT,
)
from protobuf_wire import (
    length_delimited,
    varint,
)
from tritonclient.grpc import service_pb2 as pb

INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
# OVMS's code for a graph's timestamp and parameter failures (MEDIAPIPE_INVALID_TIMESTAMP and
# NOT_IMPLEMENTED are missing from its gRPC map); ovmsx keeps the code and the full message.
UNKNOWN = grpc.StatusCode.UNKNOWN
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED

NOT_A_REQUEST = f"{INPUT_FORMAT} - request is not a valid ModelInferRequest"

Message = str | re.Pattern[str]


@dataclass(frozen=True)
class GrpcRow:
    id: str
    target: str
    """The servable the request is for; the good request after the row goes to it."""
    body: bytes | list[bytes]
    """ModelInfer's serialized request; for a stream, the messages it sends."""
    code: grpc.StatusCode | None
    """The call's status code; None for a stream whose error is a reply and goes on."""
    message: Message
    """The status's message, or the stream's error reply; a pattern where it has a variable part."""
    metadata: tuple[tuple[str, str], ...] = ()
    request_id: str = ""
    """What a stream's error reply must carry as its id."""
    method: str = "ModelInfer"


def infer_request(
    model: str = "add_one",
    name: str = "input",
    datatype: str = "FP32",
    shape: list[int] | None = None,
    raw: bytes | None = None,
    version: str = "",
    typed: list | None = None,
    contents_field: str = "fp32_contents",
    request_id: str = "",
) -> bytes:
    """One input; its data raw (the default: X's bytes), or typed in ``contents_field``."""
    message = pb.ModelInferRequest(model_name=model, model_version=version, id=request_id)
    tensor = message.inputs.add(
        name=name, datatype=datatype, shape=[1, 10] if shape is None else shape
    )
    if typed is not None:
        getattr(tensor.contents, contents_field).extend(typed)
    else:
        message.raw_input_contents.append(X.tobytes() if raw is None else raw)
    return message.SerializeToString()


def strings_request(
    shape: list[int], raw: bytes, model: str = "strings", name: str = "text"
) -> bytes:
    return infer_request(model, name, "BYTES", shape, raw)


def typed_request(
    name: str, values: np.ndarray, shape: list[int] | None = None, raw: bytes | None = None
) -> bytes:
    """The typed model's good request with input ``name`` replaced by ``values``."""
    message = good_request("typed")
    index = [tensor.name for tensor in message.inputs].index(name)
    tensor = message.inputs[index]
    tensor.datatype = DATATYPES[values.dtype]
    del tensor.shape[:]
    tensor.shape.extend(values.shape if shape is None else shape)
    message.raw_input_contents[index] = values.tobytes() if raw is None else raw
    return message.SerializeToString()


def mixed_contents_request(name: str, values: list[int], shape: list[int]) -> bytes:
    """The typed model's good request, input ``name`` carrying ``values`` in int_contents."""
    message = good_request("typed")
    index = [tensor.name for tensor in message.inputs].index(name)
    given = pb.ModelInferRequest()
    for position, tensor in enumerate(message.inputs):
        added = given.inputs.add()
        added.CopyFrom(tensor)
        if position == index:
            del added.shape[:]
            added.shape.extend(shape)
            added.contents.int_contents.extend(values)
        else:
            given.raw_input_contents.append(message.raw_input_contents[position])
    # Typed contents for one input and raw for the others: OVMS refuses the mix as a whole.
    given.model_name = "typed"
    return given.SerializeToString()


def all_typed_request(short: str, values: list[int]) -> bytes:
    """The typed model's good request with every input in typed contents (the field of its
    datatype), input ``short`` carrying ``values`` instead (its shape stays [2])."""
    message = pb.ModelInferRequest(model_name="typed")
    for name, array in TYPED.items():
        datatype = DATATYPES[array.dtype]
        tensor = message.inputs.add(name=name, datatype=datatype, shape=array.shape)
        field = CONTENTS_FIELD[datatype]
        getattr(tensor.contents, field).extend(values if name == short else array.tolist())
    return message.SerializeToString()


def changed(target: str, change) -> bytes:
    """The good request of ``target`` after ``change(message)``."""
    message = good_request(target)
    change(message)
    return message.SerializeToString()


def good_bytes(target: str, request_id: str = "") -> bytes:
    return good_request(target, request_id).SerializeToString()


def with_parameter(target: str, key: str, parameter: bytes) -> bytes:
    """The good request with one request parameter, its InferParameter given as wire bytes
    (map entries are messages of key = 1, value = 2)."""
    entry = length_delimited(1, key.encode()) + length_delimited(2, parameter)
    return good_bytes(target) + length_delimited(4, entry)


def shape_on_the_wire(dims: list[int]) -> bytes:
    """add_one's request whose one input has ``dims`` written as raw varints: values a client
    could put there that do not fit int64."""
    tensor = length_delimited(1, b"input") + length_delimited(2, b"FP32")
    tensor += length_delimited(3, b"".join(varint(dim) for dim in dims))
    return (
        length_delimited(1, b"add_one")
        + length_delimited(5, tensor)
        + length_delimited(7, X.tobytes())
    )


def typed_strings(message: pb.ModelInferRequest) -> None:
    """Two strings in bytes_contents for a shape of three."""
    del message.raw_input_contents[:]
    message.inputs[0].contents.bytes_contents.extend([b"a", b"b"])


RANK_10000 = [1] * 10_000
DIMS_16 = ",".join(["1"] * 16)
RANDOM = random.Random(14).randbytes(256)
