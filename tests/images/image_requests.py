"""Sending encoded images the ways clients do: tritonclient over gRPC (``raw_input_contents``)
and HTTP (the binary-data extension), hand-built gRPC requests (``bytes_contents``, damaged raw
buffers), and plain HTTP (JSON ``data``, a binary body without ``binary_data_size``)."""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence

import grpc
import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from rest_process import Reply, RestProcess
from tritonclient.grpc import service_pb2 as pb
from tritonclient.grpc import service_pb2_grpc
from tritonclient.utils import InferenceServerException

HEADER = "Inference-Header-Content-Length"


def prefixed(images: Sequence[bytes]) -> bytes:
    """The KServe BYTES layout: each element after its 4-byte little-endian length."""
    return b"".join(struct.pack("<I", len(image)) + image for image in images)


def grpc_infer(
    client: grpcclient.InferenceServerClient,
    servable: str,
    images: Sequence[bytes],
    input_name: str = "image",
    output: str = "pixels",
) -> np.ndarray:
    """tritonclient over gRPC: the images go in ``raw_input_contents``, length-prefixed."""
    given = grpcclient.InferInput(input_name, [len(images)], "BYTES")
    given.set_data_from_numpy(np.array(list(images), dtype=np.object_))
    return client.infer(servable, [given]).as_numpy(output)


def grpc_error(
    client: grpcclient.InferenceServerClient, servable: str, images: Sequence[bytes], **kw
) -> InferenceServerException:
    try:
        grpc_infer(client, servable, images, **kw)
    except InferenceServerException as error:
        return error
    raise AssertionError(f"{servable} took {len(images)} image(s) it should refuse")


def _call(port: int, message: pb.ModelInferRequest) -> pb.ModelInferResponse:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        return service_pb2_grpc.GRPCInferenceServiceStub(channel).ModelInfer(message, timeout=30)


def _pixels(response: pb.ModelInferResponse) -> np.ndarray:
    (output,) = response.outputs
    data = np.frombuffer(response.raw_output_contents[0], np.float32)
    return data.reshape(tuple(output.shape))


def bytes_contents_infer(
    port: int,
    servable: str,
    images: Sequence[bytes],
    input_name: str = "image",
    shape: Sequence[int] | None = None,
) -> np.ndarray:
    """A hand-built request with one ``bytes_contents`` element per image."""
    message = pb.ModelInferRequest(model_name=servable)
    given = message.inputs.add(name=input_name, datatype="BYTES")
    given.shape.extend([len(images)] if shape is None else shape)
    given.contents.bytes_contents.extend(images)
    return _pixels(_call(port, message))


def raw_infer(port: int, servable: str, buffer: bytes, shape: Sequence[int]) -> np.ndarray:
    """A hand-built request whose ``raw_input_contents`` is ``buffer`` exactly."""
    message = pb.ModelInferRequest(model_name=servable)
    message.inputs.add(name="image", datatype="BYTES", shape=list(shape))
    message.raw_input_contents.append(buffer)
    return _pixels(_call(port, message))


def rpc_error(call, *args, **kw) -> grpc.RpcError:
    try:
        call(*args, **kw)
    except grpc.RpcError as error:
        return error
    raise AssertionError("the request was answered, not refused")


def http_infer(
    client: httpclient.InferenceServerClient,
    servable: str,
    images: Sequence[bytes],
    input_name: str = "image",
    output: str = "pixels",
) -> np.ndarray:
    """tritonclient over HTTP with the binary-data extension: ``binary_data_size`` counts the
    length prefixes too."""
    given = httpclient.InferInput(input_name, [len(images)], "BYTES")
    given.set_data_from_numpy(np.array(list(images), dtype=np.object_), binary_data=True)
    wanted = httpclient.InferRequestedOutput(output, binary_data=True)
    return client.infer(servable, [given], outputs=[wanted]).as_numpy(output)


def post_binary_without_size(server: RestProcess, servable: str, images: Sequence[bytes]) -> Reply:
    """The one BYTES input with no ``binary_data_size``: it takes the whole binary tail."""
    document = {"inputs": [{"name": "image", "shape": [len(images)], "datatype": "BYTES"}]}
    head = json.dumps(document).encode()
    path = f"/v2/models/{servable}/infer"
    return server.request("POST", path, head + prefixed(images), {HEADER: str(len(head))})


def post_json(
    server: RestProcess, servable: str, strings: list, shape: list | None = None
) -> Reply:
    """JSON ``data`` strings, which the server takes verbatim (no base64 decoding)."""
    given = {"name": "image", "shape": shape or [len(strings)], "datatype": "BYTES"}
    return server.infer(servable, {"inputs": [{**given, "data": strings}]})


def reply_pixels(reply: Reply) -> np.ndarray:
    assert reply.status == 200, reply.body
    (output,) = reply.json()["outputs"]
    return np.array(output["data"], np.float32).reshape(output["shape"])
