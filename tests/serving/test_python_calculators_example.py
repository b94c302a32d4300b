"""examples/python_calculators: prepare it, serve its config, run its client."""

from __future__ import annotations

import numpy as np
import tritonclient.grpc as grpcclient
from serving_examples import prepared_copy, run_client
from serving_process import served


def test_python_calculators_example_client_gets_the_right_answers(tmp_path) -> None:
    folder = prepared_copy("python_calculators", tmp_path)
    with served(folder / "config.json", tmp_path) as server:
        assert "ok: both graphs answered as expected" in run_client(folder, server.url)
        _same_as_the_model_on_the_image_resized_by_hand(server.url)


def _same_as_the_model_on_the_image_resized_by_hand(url: str) -> None:
    """image_mean on a random image equals the channel_mean model, called directly, on the
    image resized (nearest neighbour) and scaled in numpy: the same bits."""
    image = np.random.default_rng(3).integers(0, 256, (45, 70, 3), dtype=np.uint8)
    rows, cols = np.arange(32) * 45 // 32, np.arange(32) * 70 // 32
    chw = (image[rows][:, cols].astype(np.float32).transpose(2, 0, 1) / 255)[np.newaxis]
    with grpcclient.InferenceServerClient(url) as client:
        pixels = grpcclient.InferInput("image", list(image.shape), "UINT8")
        pixels.set_data_from_numpy(image)
        answer = client.infer("image_mean", [pixels]).as_numpy("channel_mean")
        direct = grpcclient.InferInput("image", [1, 3, 32, 32], "FP32")
        direct.set_data_from_numpy(np.ascontiguousarray(chw))
        by_hand = client.infer("channel_mean", [direct]).as_numpy("mean")
    assert answer.shape == (1, 3)
    np.testing.assert_array_equal(answer, by_hand)
    np.testing.assert_allclose(answer[0], chw[0].mean(axis=(1, 2)), rtol=1e-5)
