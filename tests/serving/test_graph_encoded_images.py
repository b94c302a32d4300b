"""Encoded images on a graph's IMAGE input (beyond OVMS, whose graphs take raw pixels only): one
JPEG or PNG file in a BYTES element becomes the ImageFrame the calculator gets, RGB(A) or gray
as MediaPipe's formats say, over gRPC (raw and bytes_contents) and REST; every answer is
compared with OpenCV decoding the same file here."""

from __future__ import annotations

import json
from collections.abc import Iterator

import cv2
import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from kserve_requests import assert_status, request, rpc_error
from serving_graphs_tags import tag_graphs, write_graphs
from serving_process import ServerProcess, served

INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    config = write_graphs(tmp_path_factory.mktemp("image_graphs"), tag_graphs())
    with served(config, tmp_path_factory.mktemp("image_srv"), rest=True) as process:
        yield process


def _picture(channels: int, dtype: type = np.uint8) -> np.ndarray:
    """A 6x9 picture with distinct channels, so a swapped channel order shows."""
    rng = np.random.default_rng(channels)
    top = np.iinfo(dtype).max
    pixels = rng.integers(0, top, (6, 9, channels), endpoint=True).astype(dtype)
    return pixels[:, :, 0] if channels == 1 else pixels


def _encoded(extension: str, pixels: np.ndarray) -> bytes:
    ok, data = cv2.imencode(extension, pixels)
    assert ok
    return data.tobytes()


def _as_rgb(encoded: bytes) -> np.ndarray:
    """What the calculator must see: OpenCV's decoding, in MediaPipe's channel order."""
    decoded = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_UNCHANGED)
    if decoded.ndim == 2:
        return decoded[:, :, np.newaxis]
    order = cv2.COLOR_BGR2RGB if decoded.shape[2] == 3 else cv2.COLOR_BGRA2RGBA
    return cv2.cvtColor(decoded, order)


def _bytes_input(encoded: bytes) -> grpcclient.InferInput:
    given = grpcclient.InferInput("image", [1], "BYTES")
    return given.set_data_from_numpy(np.array([encoded], dtype=np.object_))


CASES = [
    (".jpg", 3, np.uint8, "SRGB"),
    (".jpg", 1, np.uint8, "GRAY8"),
    (".png", 3, np.uint8, "SRGB"),
    (".png", 4, np.uint8, "SRGBA"),
    (".png", 1, np.uint16, "GRAY16"),
    (".png", 3, np.uint16, "SRGB48"),
]


@pytest.mark.parametrize(("extension", "channels", "dtype", "image_format"), CASES)
def test_an_encoded_file_reaches_the_calculator_as_a_frame(
    client, extension: str, channels: int, dtype: type, image_format: str
) -> None:
    encoded = _encoded(extension, _picture(channels, dtype))
    result = client.infer("image_echo", [_bytes_input(encoded)])
    expected = _as_rgb(encoded)
    report = json.loads(result.as_numpy("report").tobytes())
    assert report == [image_format, 6, 9, channels, np.dtype(dtype).name]
    np.testing.assert_array_equal(result.as_numpy("image_out"), expected)


def test_a_frame_from_a_file_is_the_graphs_output_too(client) -> None:
    encoded = _encoded(".png", _picture(3))
    result = client.infer("image_direct", [_bytes_input(encoded)])
    np.testing.assert_array_equal(result.as_numpy("image"), _as_rgb(encoded))


def test_the_file_may_come_in_raw_contents(stub) -> None:
    encoded = _encoded(".jpg", _picture(3))
    message = request("image_echo")
    message.inputs.add(name="image", datatype="BYTES", shape=[1])
    message.raw_input_contents.append(len(encoded).to_bytes(4, "little") + encoded)
    response = stub.ModelInfer(message)
    (index,) = [i for i, t in enumerate(response.outputs) if t.name == "image_out"]
    got = np.frombuffer(response.raw_output_contents[index], np.uint8).reshape(6, 9, 3)
    np.testing.assert_array_equal(got, _as_rgb(encoded))


def test_the_file_may_come_over_rest(server: ServerProcess) -> None:
    encoded = _encoded(".png", _picture(4))
    given = httpclient.InferInput("image", [1], "BYTES")
    given.set_data_from_numpy(np.array([encoded], dtype=np.object_), binary_data=True)
    with httpclient.InferenceServerClient(f"127.0.0.1:{server.rest_port}") as client:
        result = client.infer("image_echo", [given])
    np.testing.assert_array_equal(result.as_numpy("image_out"), _as_rgb(encoded))


@pytest.mark.parametrize(
    ("elements", "shape", "code", "base", "details"),
    [
        (
            [b"not an image at all"],
            [1],
            grpc.StatusCode.UNKNOWN,
            "Image parsing failed",
            "image 0 is no JPEG or PNG; input name: image",
        ),
        ([b""], [1], INVALID, "Bytes contents is empty", "image 0; input name: image"),
        (
            [b"a", b"b"],
            [2],
            INVALID,
            "Invalid input shape",
            "an IMAGE input takes one encoded image, shape [1]; Actual: [2]; input name: image",
        ),
    ],
)
def test_a_file_that_is_no_image_is_refused(stub, elements, shape, code, base, details) -> None:
    message = request("image_echo")
    tensor = message.inputs.add(name="image", datatype="BYTES", shape=shape)
    tensor.contents.bytes_contents.extend(elements)
    assert_status(rpc_error(stub.ModelInfer, message), code, base, details)


def test_the_server_goes_on_after_a_refused_file(client, stub) -> None:
    test_a_file_that_is_no_image_is_refused(
        stub, [b"\xff\xd8\xff garbage"], [1], grpc.StatusCode.UNKNOWN, "Image parsing failed", None
    )
    encoded = _encoded(".jpg", _picture(1))
    result = client.infer("image_direct", [_bytes_input(encoded)])
    np.testing.assert_array_equal(result.as_numpy("image"), _as_rgb(encoded))
