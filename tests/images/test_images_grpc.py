"""Encoded images sent to models over gRPC, with tritonclient (``raw_input_contents``) and as
``bytes_contents``: each answer against the same file decoded by OpenCV and resized by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from image_files import (
    SAMPLING_420,
    SAMPLING_444,
    decoded,
    expected,
    jpeg,
    picture,
    png,
    written,
)
from image_requests import bytes_contents_infer, grpc_infer
from rest_process import RestProcess

COLOUR_FILES = {
    "jpeg_420": lambda image: jpeg(image, SAMPLING_420),
    "jpeg_444": lambda image: jpeg(image, SAMPLING_444),
    "png": png,
}
# The tolerance of a resized image: OpenCV interpolates 8-bit images in fixed point.
RESIZED = {"UINT8": 1.0, "FP32": 1e-3}


def _sent(files: Path, name: str, data: bytes) -> bytes:
    """The file as a client reads it from disk."""
    return written(files, name, data).read_bytes()


@pytest.mark.parametrize("kind", sorted(COLOUR_FILES))
@pytest.mark.parametrize(("model", "datatype"), [("u8_fixed", "UINT8"), ("fp32_fixed", "FP32")])
def test_a_bigger_colour_image_is_resized_to_the_input(
    grpc_client, files: Path, kind: str, model: str, datatype: str
) -> None:
    data = _sent(files, f"big.{kind}", COLOUR_FILES[kind](picture(20, 30)))
    answer = grpc_infer(grpc_client, model, [data])
    assert answer.shape == (1, 4, 6, 3)
    dtype = np.uint8 if datatype == "UINT8" else np.float32
    want = expected(data, 4, 6, dtype)
    np.testing.assert_allclose(answer[0], want, atol=RESIZED[datatype], rtol=0)


@pytest.mark.parametrize("kind", sorted(COLOUR_FILES))
def test_a_smaller_image_is_enlarged(grpc_client, files: Path, kind: str) -> None:
    data = _sent(files, f"small.{kind}", COLOUR_FILES[kind](picture(2, 3, seed=4)))
    answer = grpc_infer(grpc_client, "fp32_fixed", [data])
    np.testing.assert_allclose(answer[0], expected(data, 4, 6), atol=1e-3, rtol=0)


@pytest.mark.parametrize("model", ["u8_fixed", "u8_default"])
def test_an_image_of_the_input_size_is_taken_as_decoded(grpc_client, files, model) -> None:
    data = _sent(files, "exact.jpg", jpeg(picture(4, 6, seed=1)))
    answer = grpc_infer(grpc_client, model, [data])
    np.testing.assert_array_equal(answer[0], decoded(data))


def test_colour_order_is_bgr(grpc_client) -> None:
    red = np.zeros((4, 6, 3), np.uint8)
    red[:, :, 2] = 255  # OpenCV holds pixels as B, G, R
    answer = grpc_infer(grpc_client, "u8_fixed", [png(red)])
    assert answer[0, 0, 0].tolist() == [0, 0, 255]


@pytest.mark.parametrize("kind", ["jpeg", "png"])
def test_gray_images_for_a_one_channel_input(grpc_client, files: Path, kind: str) -> None:
    image = picture(8, 12, channels=1, seed=2)
    data = _sent(files, f"gray.{kind}", jpeg(image) if kind == "jpeg" else png(image))
    answer = grpc_infer(grpc_client, "gray", [data])
    assert answer.shape == (1, 4, 6, 1)
    np.testing.assert_allclose(answer[0], expected(data, 4, 6, np.uint8), atol=1, rtol=0)


def test_png_with_alpha_keeps_bgra(grpc_client) -> None:
    image = picture(4, 6, channels=4, seed=3)
    answer = grpc_infer(grpc_client, "four", [png(image)])
    np.testing.assert_array_equal(answer[0], image)  # BGRA as written, alpha included


def test_16_bit_png_is_cast_without_scaling(grpc_client) -> None:
    image = picture(4, 6, bits=16, seed=5)
    data = png(image)
    as_floats = grpc_infer(grpc_client, "fp32_fixed", [data])
    np.testing.assert_array_equal(as_floats[0], image)  # values kept, up to 65535
    as_bytes = grpc_infer(grpc_client, "u8_fixed", [data])
    np.testing.assert_array_equal(as_bytes[0], np.minimum(image, 255))  # saturated
    assert image.max() > 255


def test_a_signed_input_saturates(grpc_client) -> None:
    image = picture(4, 6, seed=6)
    answer = grpc_infer(grpc_client, "int8", [png(image)])
    np.testing.assert_array_equal(answer[0], np.minimum(image, 127))
    assert image.max() > 127


@pytest.mark.parametrize(
    ("size", "taken"),
    [((4, 5), (4, 5)), ((9, 12), (5, 7)), ((1, 2), (2, 3)), ((3, 9), (3, 7))],
)
def test_a_range_takes_the_image_size_clamped(grpc_client, size, taken) -> None:
    data = png(picture(*size, seed=7))
    answer = grpc_infer(grpc_client, "u8_range", [data])
    assert answer.shape == (1, *taken, 3)
    np.testing.assert_allclose(answer[0], expected(data, *taken, np.uint8), atol=1, rtol=0)


def test_any_size_takes_images_as_they_are(grpc_client) -> None:
    images = [png(picture(5, 7, seed=s)) for s in range(3)]
    answer = grpc_infer(grpc_client, "u8_any", images)
    assert answer.shape == (3, 5, 7, 3)
    for got, data in zip(answer, images, strict=True):
        np.testing.assert_array_equal(got, decoded(data))


def test_a_batch_of_different_sizes_is_resized_image_by_image(grpc_client, files: Path) -> None:
    sizes = [(20, 30), (4, 6), (3, 2)]
    images = [
        _sent(files, f"{i}.jpg", jpeg(picture(h, w, seed=i))) for i, (h, w) in enumerate(sizes)
    ]
    answer = grpc_infer(grpc_client, "u8_batch3", images)
    assert answer.shape == (3, 4, 6, 3)
    for got, data in zip(answer, images, strict=True):
        np.testing.assert_allclose(got, expected(data, 4, 6, np.uint8), atol=1, rtol=0)


def test_config_layout_nhwc_to_nchw_takes_images(grpc_client) -> None:
    data = jpeg(picture(10, 10, seed=8))
    answer = grpc_infer(grpc_client, "nchw_as_nhwc", [data])
    assert answer.shape == (1, 3, 4, 6)  # the model itself computes in NCHW
    want = expected(data, 4, 6).transpose(2, 0, 1)
    np.testing.assert_allclose(answer[0], want, atol=1e-3, rtol=0)


def test_bytes_contents_carry_the_same_images(image_server: RestProcess) -> None:
    images = [jpeg(picture(6, 6, seed=s), SAMPLING_444) for s in range(2)]
    answer = bytes_contents_infer(image_server.port, "u8_any", images)
    assert answer.shape == (2, 6, 6, 3)
    for got, data in zip(answer, images, strict=True):
        np.testing.assert_array_equal(got, decoded(data))
    resized = bytes_contents_infer(image_server.port, "fp32_fixed", images[:1])
    np.testing.assert_allclose(resized[0], expected(images[0], 4, 6), atol=1e-3, rtol=0)
