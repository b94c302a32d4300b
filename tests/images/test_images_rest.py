"""Encoded images sent to models over REST: tritonclient's binary-data extension (whose
``binary_data_size`` counts the length prefixes), and a plain HTTP body whose only BYTES input
takes the whole binary tail."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from image_files import SAMPLING_444, decoded, expected, jpeg, picture, png, written
from image_requests import HEADER, http_infer, post_binary_without_size, prefixed, reply_pixels
from rest_process import RestProcess


@pytest.mark.parametrize("encode", [jpeg, png], ids=["jpeg", "png"])
def test_tritonclient_http_binary_images_are_resized(http_client, files: Path, encode) -> None:
    data = written(files, "picture", encode(picture(12, 9, seed=21))).read_bytes()
    answer = http_infer(http_client, "fp32_fixed", [data])
    assert answer.shape == (1, 4, 6, 3)
    np.testing.assert_allclose(answer[0], expected(data, 4, 6), atol=1e-3, rtol=0)


def test_tritonclient_http_batch_of_images(http_client) -> None:
    images = [jpeg(picture(5, 7, seed=s), SAMPLING_444) for s in range(4)]
    answer = http_infer(http_client, "u8_any", images)
    assert answer.shape == (4, 5, 7, 3)
    for got, data in zip(answer, images, strict=True):
        np.testing.assert_array_equal(got, decoded(data))


def test_gray_over_http(http_client) -> None:
    data = png(picture(4, 6, channels=1, seed=22))
    answer = http_infer(http_client, "gray", [data])
    np.testing.assert_array_equal(answer[0], decoded(data))


def test_the_only_bytes_input_takes_the_whole_tail(image_server: RestProcess) -> None:
    data = jpeg(picture(8, 8, seed=23))
    reply = post_binary_without_size(image_server, "u8_fixed", [data])
    np.testing.assert_allclose(reply_pixels(reply)[0], expected(data, 4, 6, np.uint8), atol=1)


def test_binary_data_size_counts_the_length_prefixes(image_server: RestProcess) -> None:
    images = [png(picture(4, 6, seed=s)) for s in (24, 25)]
    tail = prefixed(images)
    given = {"name": "image", "shape": [2], "datatype": "BYTES"}
    document = {"inputs": [{**given, "parameters": {"binary_data_size": len(tail)}}]}
    head = json.dumps(document).encode()
    reply = image_server.request(
        "POST", "/v2/models/u8_any/infer", head + tail, {HEADER: str(len(head))}
    )
    pixels = reply_pixels(reply)
    for got, data in zip(pixels, images, strict=True):
        np.testing.assert_array_equal(got, decoded(data))


def test_binary_images_without_length_prefixes_are_refused(image_server: RestProcess) -> None:
    data = png(picture(4, 6, seed=26))
    given = {"name": "image", "shape": [1], "datatype": "BYTES"}
    document = {"inputs": [{**given, "parameters": {"binary_data_size": len(data)}}]}
    head = json.dumps(document).encode()
    reply = image_server.request(
        "POST", "/v2/models/u8_fixed/infer", head + data, {HEADER: str(len(head))}
    )
    assert reply.status == 400
    assert reply.error.startswith("Inputs inside buffer does not match expected format."), reply


def test_without_binary_data_size_only_one_image_fits(image_server: RestProcess) -> None:
    # The whole tail goes to the only BYTES input when its shape is [1]; two images need the
    # size said.
    images = [png(picture(4, 6, seed=s)) for s in (27, 28)]
    reply = post_binary_without_size(image_server, "u8_any", images)
    assert reply.status == 400
    assert reply.error.startswith("Could not parse input content. Not valid ndarray detected")
