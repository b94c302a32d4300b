"""Encoded images sent to DAG pipelines: a pipeline input takes the image rules of the model
input it feeds; with a demultiplexer at the entry the images become ``[N,1,H,W,C]`` and each
goes through the model on its own."""

from __future__ import annotations

import numpy as np
import pytest
from image_files import decoded, expected, jpeg, picture, png
from image_requests import bytes_contents_infer, grpc_error, grpc_infer, http_infer
from rest_process import RestProcess

PICTURE = "picture"  # the pipelines' input


def test_a_pipeline_resizes_like_its_model(grpc_client) -> None:
    data = jpeg(picture(16, 20, seed=31))
    answer = grpc_infer(grpc_client, "pipe_u8_fixed", [data], input_name=PICTURE)
    assert answer.shape == (1, 4, 6, 3)
    np.testing.assert_allclose(answer[0], expected(data, 4, 6, np.uint8), atol=1, rtol=0)


def test_a_pipeline_over_rest(http_client) -> None:
    data = png(picture(3, 3, seed=32))
    answer = http_infer(http_client, "pipe_u8_fixed", [data], input_name=PICTURE)
    np.testing.assert_allclose(answer[0], expected(data, 4, 6, np.uint8), atol=1, rtol=0)


def test_a_pipeline_with_bytes_contents(image_server: RestProcess) -> None:
    images = [png(picture(5, 5, seed=s)) for s in (33, 34)]
    answer = bytes_contents_infer(image_server.port, "pipe_u8_any", images, input_name=PICTURE)
    assert answer.shape == (2, 5, 5, 3)
    for got, data in zip(answer, images, strict=True):
        np.testing.assert_array_equal(got, decoded(data))


def test_a_pipeline_over_an_nchw_model_refuses_images(grpc_client) -> None:
    error = grpc_error(grpc_client, "pipe_nchw", [png(picture(4, 6))], input_name=PICTURE)
    assert error.status() == "StatusCode.INVALID_ARGUMENT"
    assert error.message().startswith("Received binary image input but resource not configured")


def test_a_dynamic_entry_demultiplexer_splits_the_images(grpc_client) -> None:
    images = [jpeg(picture(4, 6, seed=s)) for s in range(3)]
    answer = grpc_infer(grpc_client, "pipe_demux_dynamic", images, input_name=PICTURE)
    assert answer.shape == (3, 1, 4, 6, 3)
    for got, data in zip(answer, images, strict=True):
        np.testing.assert_array_equal(got[0], decoded(data))


def test_a_dynamic_demultiplexer_resizes_nothing(grpc_client) -> None:
    # Its first dimension has any size, and any dimension turns resizing off (OVMS's rule).
    error = grpc_error(grpc_client, "pipe_demux_dynamic", [png(picture(8, 8))], input_name=PICTURE)
    assert error.status() == "StatusCode.INVALID_ARGUMENT"
    assert error.message().startswith("Invalid input shape"), error.message()


def test_a_static_entry_demultiplexer_resizes(grpc_client) -> None:
    images = [png(picture(9, 9, seed=35)), jpeg(picture(2, 3, seed=36))]
    answer = grpc_infer(grpc_client, "pipe_demux_two", images, input_name=PICTURE)
    assert answer.shape == (2, 1, 4, 6, 3)
    for got, data in zip(answer, images, strict=True):
        np.testing.assert_allclose(got[0], expected(data, 4, 6, np.uint8), atol=1, rtol=0)


@pytest.mark.parametrize("count", [1, 3])
def test_a_static_demultiplexer_wants_its_count(grpc_client, count: int) -> None:
    images = [png(picture(4, 6))] * count
    error = grpc_error(grpc_client, "pipe_demux_two", images, input_name=PICTURE)
    assert error.status() == "StatusCode.INVALID_ARGUMENT"
    assert error.message().startswith("Invalid input batch size"), error.message()


def test_garbage_in_a_pipeline(grpc_client) -> None:
    error = grpc_error(grpc_client, "pipe_demux_dynamic", [b"garbage"], input_name=PICTURE)
    assert error.status() == "StatusCode.UNKNOWN"
    assert error.message().startswith("Image parsing failed"), error.message()
