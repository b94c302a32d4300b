"""examples/graph_python_openvino: prepare it, serve its config, run its client; then check a
random row against numpy and the graph's metadata."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from serving_examples import prepared_copy, run_client
from serving_process import ServerProcess, served


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ServerProcess]]:
    """The example copied to a temporary folder, prepared, and served."""
    root = tmp_path_factory.mktemp("example")
    folder = prepared_copy("graph_python_openvino", root)
    with served(folder / "config.json", root) as server:
        yield folder, server


def test_example_client_gets_the_answers_numpy_gets(example) -> None:
    folder, server = example
    output = run_client(folder, server.url, server.log())
    for line in (
        "black row: [0, 0, 0, 0, 0, 0, 0, 0] -> dark",
        "left-to-right ramp: [0, 36, 72, 109, 145, 182, 218, 255] -> rising",
        "right-to-left ramp: [255, 218, 182, 145, 109, 72, 36, 0] -> falling",
        "ok: the graph's answers match numpy",
    ):
        assert line in output, output


def _prepare_module(folder: Path):
    spec = importlib.util.spec_from_file_location("example_prepare", folder / "prepare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_random_rows_match_the_steps_by_hand(example) -> None:
    folder, server = example
    w, b = _prepare_module(folder).weights()
    rows = np.random.default_rng(11).integers(0, 256, (6, 8), dtype=np.uint8)
    with grpcclient.InferenceServerClient(server.url) as client:
        for pixels in rows:
            given = grpcclient.InferInput("pixels", [8], "UINT8")
            given.set_data_from_numpy(pixels)
            result = client.infer("classify", [given])
            logits = (pixels.astype(np.float32) / 255) @ w + b
            expected = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
            probabilities = result.as_numpy("probabilities")
            assert probabilities.dtype == np.float32
            np.testing.assert_allclose(probabilities, expected, rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(result.as_numpy("label"), [expected.argmax()])


def test_wrong_pixel_datatype_fails_in_the_preprocessing_node(example) -> None:
    _, server = example
    given = grpcclient.InferInput("pixels", [8], "FP32")
    given.set_data_from_numpy(np.zeros(8, np.float32))
    with (
        grpcclient.InferenceServerClient(server.url) as client,
        pytest.raises(grpcclient.InferenceServerException) as caught,
    ):
        client.infer("classify", [given])
    assert caught.value.message() == (
        "Mediapipe execution failed. MP status - INTERNAL: Calculator::Process() for node "
        '"preprocess" failed: Error occurred during graph execution '
        "(ValueError: pixels must be UINT8, got FP32)"
    )
