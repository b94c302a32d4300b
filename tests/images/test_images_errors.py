"""Encoded images a model must refuse, each with OVMS's status (gRPC code, HTTP status and
message), and a server that goes on serving afterwards."""

from __future__ import annotations

import base64
import struct

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from image_files import decoded, picture, png
from image_requests import (
    bytes_contents_infer,
    grpc_error,
    grpc_infer,
    post_binary_without_size,
    post_json,
    prefixed,
    raw_infer,
    rpc_error,
)
from rest_process import RestProcess
from tritonclient.utils import InferenceServerException

COLOUR = png(picture(4, 6, seed=11))
GRAY = png(picture(4, 6, channels=1, seed=12))


def _grpc_refusal(client, model: str, images: list[bytes]) -> tuple[str, str]:
    error = grpc_error(client, model, images)
    return error.status(), error.message()


@pytest.mark.parametrize(
    ("model", "images", "status", "message"),
    [
        ("u8_fixed", [b"these bytes are no image"], "UNKNOWN", "Image parsing failed"),
        ("u8_fixed", [COLOUR[: len(COLOUR) // 3]], "UNKNOWN", "Image parsing failed"),
        ("u8_fixed", [b""], "UNKNOWN", "Image parsing failed"),  # raw: a zero-length image
        (
            "u8_fixed",
            [GRAY],
            "INVALID_ARGUMENT",
            "Invalid number of channels in binary input",
        ),
        ("gray", [COLOUR], "INVALID_ARGUMENT", "Invalid number of channels in binary input"),
        (
            "nchw",
            [COLOUR],
            "INVALID_ARGUMENT",
            "Received binary image input but resource not configured to accept NHWC layout",
        ),
        ("int64", [COLOUR], "INVALID_ARGUMENT", "Invalid input precision"),
        ("flat", [COLOUR], "UNKNOWN", "Functionality not implemented"),
        ("u8_fixed", [COLOUR, COLOUR], "INVALID_ARGUMENT", "Invalid input batch size"),
        ("u8_default", [png(picture(5, 6))], "INVALID_ARGUMENT", "Invalid input shape"),
        ("u8_any_height", [png(picture(5, 7))], "INVALID_ARGUMENT", "Invalid input shape"),
        (
            "u8_any",
            [png(picture(4, 6)), png(picture(5, 6))],
            "INVALID_ARGUMENT",
            "Binary input images for this endpoint are required to have the same resolution",
        ),
    ],
)
def test_refused_over_grpc(grpc_client, model, images, status, message) -> None:
    got_status, got_message = _grpc_refusal(grpc_client, model, images)
    assert got_status == f"StatusCode.{status}"
    assert got_message.startswith(message), got_message


def test_the_first_failing_image_is_reported(grpc_client) -> None:
    # Image 1 is gray (a channel error), image 2 is garbage: image 1 comes first.
    images = [COLOUR, GRAY, b"garbage"]
    status, message = _grpc_refusal(grpc_client, "u8_batch3", images)
    assert status == "StatusCode.INVALID_ARGUMENT"
    assert message.startswith("Invalid number of channels in binary input"), message
    assert "image 1" in message


def _with_scale(client, images: list[bytes], scale: np.ndarray):
    given = grpcclient.InferInput("image", [len(images)], "BYTES")
    given.set_data_from_numpy(np.array(images, dtype=np.object_))
    factor = grpcclient.InferInput("scale", list(scale.shape), "FP32")
    factor.set_data_from_numpy(scale)
    return client.infer("scaled", [given, factor]).as_numpy("pixels")


def test_images_beside_other_inputs(grpc_client) -> None:
    answer = _with_scale(grpc_client, [COLOUR], np.array([0.5], np.float32))
    np.testing.assert_array_equal(answer[0], decoded(COLOUR) * np.float32(0.5))


def test_every_input_is_validated_before_images_are_decoded(grpc_client) -> None:
    # As in OVMS: the other input's batch error wins over the image that cannot be decoded.
    with pytest.raises(InferenceServerException) as refused:
        _with_scale(grpc_client, [b"garbage"], np.array([1, 2], np.float32))
    assert refused.value.status() == "StatusCode.INVALID_ARGUMENT"
    message = refused.value.message()
    assert message.startswith("Invalid input batch size"), message
    assert message.endswith("input name: scale"), message


def test_an_image_under_any_height_of_the_right_size_is_taken(grpc_client) -> None:
    data = png(picture(5, 6, seed=13))
    answer = grpc_infer(grpc_client, "u8_any_height", [data])
    np.testing.assert_array_equal(answer[0], decoded(data))


def test_an_empty_bytes_contents_element(image_server: RestProcess) -> None:
    error = rpc_error(bytes_contents_infer, image_server.port, "u8_batch3", [COLOUR, b"", COLOUR])
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("Bytes contents is empty"), error.details()


def test_the_request_shape_must_be_one_dimensional(image_server: RestProcess) -> None:
    error = rpc_error(bytes_contents_infer, image_server.port, "u8_fixed", [COLOUR], shape=[1, 1])
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith(
        "Invalid number of shape dimensions - Expected number of input shape dimensions: 1; "
        "Actual: 2; input name: image"
    ), error.details()


def test_the_shape_must_count_the_images(image_server: RestProcess) -> None:
    error = rpc_error(bytes_contents_infer, image_server.port, "u8_any", [COLOUR], shape=[2])
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("Invalid input batch size"), error.details()


@pytest.mark.parametrize(
    "buffer",
    [
        prefixed([COLOUR])[:-1],  # the image is cut short
        prefixed([COLOUR]) + b"\x01",  # a length prefix cut short
        struct.pack("<I", 2**31) + COLOUR,  # a length beyond the buffer
    ],
)
def test_raw_framing_must_hold(image_server: RestProcess, buffer: bytes) -> None:
    error = rpc_error(raw_infer, image_server.port, "u8_fixed", buffer, [1])
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("Inputs inside buffer does not match expected format.")


def test_an_empty_raw_buffer_has_no_images(image_server: RestProcess) -> None:
    error = rpc_error(raw_infer, image_server.port, "u8_any", b"", [0])
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("Invalid input batch size"), error.details()


@pytest.mark.parametrize(
    ("strings", "status", "message"),
    [
        (["no image at all"], 500, "Image parsing failed"),
        ([""], 500, "Bytes contents is empty"),
    ],
)
def test_refused_over_rest_json(image_server: RestProcess, strings, status, message) -> None:
    reply = post_json(image_server, "u8_fixed", strings)
    assert reply.status == status
    assert reply.error.startswith(message), reply.error


def test_json_strings_are_not_base64_decoded(image_server: RestProcess) -> None:
    text = base64.b64encode(COLOUR).decode()
    reply = post_json(image_server, "u8_fixed", [text])
    assert reply.status == 500
    assert reply.error.startswith("Image parsing failed"), reply.error


@pytest.mark.parametrize(
    ("model", "images", "status", "message"),
    [
        ("gray", [COLOUR], 400, "Invalid number of channels in binary input"),
        ("nchw", [COLOUR], 400, "Received binary image input but resource not configured"),
        ("flat", [COLOUR], 500, "Functionality not implemented"),
        ("u8_fixed", [b"garbage"], 500, "Image parsing failed"),
    ],
)
def test_refused_over_rest_binary(image_server: RestProcess, model, images, status, message):
    reply = post_binary_without_size(image_server, model, images)
    assert reply.status == status
    assert reply.error.startswith(message), reply.error


def test_the_server_goes_on_serving(grpc_client) -> None:
    for _ in range(3):
        _grpc_refusal(grpc_client, "u8_fixed", [b"garbage"])
        _grpc_refusal(grpc_client, "gray", [COLOUR])
    answer = grpc_infer(grpc_client, "u8_fixed", [COLOUR])
    np.testing.assert_array_equal(answer[0], decoded(COLOUR))
