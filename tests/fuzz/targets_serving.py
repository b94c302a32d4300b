"""Fuzz targets for the two ways a request body reaches a model: a gRPC ModelInfer message and
a REST infer body (JSON, optionally followed by binary data).

``model_infer`` hands the bytes to ``KServeService.model_infer_now``, exactly what the gRPC
transport calls with a ModelInfer body: the C++ core answers plain requests for the quick
model itself, and everything else takes the general path (decoding, validation against the
model, inference), deferred work included. ``rest_infer`` hands a path, the
``Inference-Header-Content-Length`` header and the body to ``RestApp.handle``, what the HTTP
server calls.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import orjson
from fuzz_contract import INTERNAL_MESSAGE, Finding, Refused
from infer_request_gen import InputSpec, build_request
from serving_setup import Serving

from ovmsx import bytes_codec
from ovmsx.frontend import grpc_predict_v2_pb2 as pb

# -- gRPC ModelInfer -------------------------------------------------------------------------


class _AbortingContext:
    """The part of a gRPC call context the service uses to refuse a deferred request."""

    async def abort(self, code: object, message: str) -> None:
        raise Refused(code, message)


def model_infer(serving: Serving) -> Callable[[bytes], None]:
    context = _AbortingContext()

    def run(data: bytes) -> None:
        answer = serving.service.model_infer_now(data)
        if not isinstance(answer, bytes):
            answer = serving.loop.run_until_complete(answer(context))
        response = pb.ModelInferResponse.FromString(answer)
        if not response.outputs:
            raise Finding("a request was answered with no outputs")

    return run


def _typed(model: str, name: str, datatype: str, values: list, field: str) -> bytes:
    message = pb.ModelInferRequest(model_name=model)
    tensor = message.inputs.add(name=name, datatype=datatype, shape=[len(values)])
    getattr(tensor.contents, field).extend(values)
    return message.SerializeToString()


def model_infer_seeds() -> list[bytes]:
    """Valid requests of every shape the models take: raw contents, typed contents, strings,
    a version, an id, requested outputs and parameters."""
    seeds = [
        build_request("add_one", [InputSpec("input", "FP32", (1, 10))]).SerializeToString(),
        build_request("dynamic", [InputSpec("input", "FP32", (2, 3))]).SerializeToString(),
        build_request(
            "two_inputs", [InputSpec("a", "FP32", (1, 4)), InputSpec("b", "FP32", (1, 4))]
        ).SerializeToString(),
    ]
    detailed = build_request("add_one", [InputSpec("input", "FP32", (1, 10))], seed=1)
    detailed.model_version = "1"
    detailed.id = "request-7"
    detailed.outputs.add(name="output")
    detailed.parameters["sequence_id"].int64_param = 3
    detailed.parameters["note"].string_param = "x"
    seeds.append(detailed.SerializeToString())
    typed = pb.ModelInferRequest(model_name="add_one")
    tensor = typed.inputs.add(name="input", datatype="FP32", shape=[1, 10])
    tensor.contents.fp32_contents.extend(float(i) for i in range(10))
    seeds.append(typed.SerializeToString())
    seeds += [
        _typed("typed", "int8", "INT8", [1, -2, 3], "int_contents"),
        _typed("typed", "int64", "INT64", [5, 6], "int64_contents"),
        _typed("typed", "uint16", "UINT16", [7], "uint_contents"),
        _typed("typed", "uint64", "UINT64", [8, 9], "uint64_contents"),
        _typed("typed", "fp64", "FP64", [0.5, 1.5], "fp64_contents"),
        _typed("typed", "bool", "BOOL", [True, False], "bool_contents"),
        _typed("strings", "text", "BYTES", [b"ab", b"", b"cde"], "bytes_contents"),
    ]
    raw_strings = pb.ModelInferRequest(model_name="strings")
    raw_strings.inputs.add(name="text", datatype="BYTES", shape=[2])
    raw_strings.raw_input_contents.append(bytes_codec.pack([b"hello", b"world"]))
    seeds.append(raw_strings.SerializeToString())
    raw_int = pb.ModelInferRequest(model_name="typed")
    raw_int.inputs.add(name="uint8", datatype="UINT8", shape=[4])
    raw_int.raw_input_contents.append(np.arange(4, dtype=np.uint8).tobytes())
    seeds.append(raw_int.SerializeToString())
    return seeds


# -- REST infer ------------------------------------------------------------------------------

# The path is chosen by the input's first byte (a byte cannot say much about a URL, and the
# router has its own tests); the last entries are wrong on purpose.
REST_PATHS = (
    "/v2/models/add_one/infer",
    "/v2/models/add_one/versions/1/infer",
    "/v2/models/dynamic/infer",
    "/v2/models/two_inputs/infer",
    "/v2/models/typed/infer",
    "/v2/models/strings/infer",
    "/v2/models/missing/infer",
    "/v2/models/add_one/versions/x/infer",
)


def rest_input(path_index: int, header: str | None, body: bytes) -> bytes:
    """The fuzz input for one REST request: a byte choosing the path, the header (a byte with
    its length, 255 for none, then its text as Latin-1, as HTTP gives it), then the body."""
    if header is None:
        head = b"\xff"
    else:
        text = header.encode("latin-1")
        assert len(text) < 255
        head = bytes([len(text)]) + text
    return bytes([path_index]) + head + body


def split_rest_input(data: bytes) -> tuple[str, str | None, bytes]:
    if len(data) < 2:
        return REST_PATHS[0], None, b""
    path = REST_PATHS[data[0] % len(REST_PATHS)]
    length = data[1]
    if length == 255:
        return path, None, data[2:]
    return path, data[2 : 2 + length].decode("latin-1"), data[2 + length :]


def rest_infer(serving: Serving) -> Callable[[bytes], None]:
    def run(data: bytes) -> None:
        path, header, body = split_rest_input(data)
        response = serving.loop.run_until_complete(serving.rest.handle("POST", path, header, body))
        if response.status == 200:
            return
        document = orjson.loads(response.body)
        message = document.get("error", "") if isinstance(document, dict) else ""
        if not isinstance(message, str) or not message.strip():
            raise Finding(f"HTTP {response.status} without an error message: {response.body!r}")
        if message.startswith(INTERNAL_MESSAGE):
            raise Finding(f"HTTP {response.status}: {message}")

    return run


def _json(document: object) -> bytes:
    return orjson.dumps(document)


def _binary(document: dict, tail: bytes) -> tuple[str, bytes]:
    head = _json(document)
    return str(len(head)), head + tail


def rest_infer_seeds() -> list[bytes]:
    floats = [float(i) for i in range(10)]
    one = {"name": "input", "datatype": "FP32", "shape": [1, 10]}
    seeds = [
        rest_input(0, None, _json({"inputs": [{**one, "data": floats}]})),
        rest_input(
            1,
            None,
            _json(
                {
                    "id": "7",
                    "parameters": {"binary_data_output": True},
                    "inputs": [{**one, "data": [floats]}],
                    "outputs": [{"name": "output", "parameters": {"binary_data": False}}],
                }
            ),
        ),
        rest_input(
            2,
            None,
            _json(
                {
                    "inputs": [
                        {
                            "name": "input",
                            "datatype": "FP32",
                            "shape": [2, 2],
                            "data": [[1, 2], [3, 4]],
                        }
                    ]
                }
            ),
        ),
        rest_input(
            4,
            None,
            _json(
                {
                    "inputs": [
                        {"name": "int16", "datatype": "INT16", "shape": [3], "data": [1, -2, 3]}
                    ]
                }
            ),
        ),
        rest_input(
            5,
            None,
            _json(
                {
                    "inputs": [
                        {"name": "text", "datatype": "BYTES", "shape": [2], "data": ["ab", "c"]}
                    ]
                }
            ),
        ),
    ]
    raw = np.arange(10, dtype=np.float32).tobytes()
    sized = {**one, "parameters": {"binary_data_size": len(raw)}}
    header, body = _binary({"inputs": [sized]}, raw)
    seeds.append(rest_input(0, header, body))
    header, body = _binary({"inputs": [one]}, raw)  # size told by shape and datatype
    seeds.append(rest_input(0, header, body))
    pair = [
        {"name": "a", "datatype": "FP32", "shape": [1, 4]},
        {"name": "b", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]},
    ]
    header, body = _binary({"inputs": pair}, np.ones(4, np.float32).tobytes())
    seeds.append(rest_input(3, header, body))
    strings = {"name": "text", "datatype": "BYTES", "shape": [1]}  # the sole BYTES input
    header, body = _binary({"inputs": [strings]}, bytes_codec.pack([b"whole tail"]))
    seeds.append(rest_input(5, header, body))
    seeds.append(rest_input(6, "12", b'{"inputs":[]}'))
    return seeds
