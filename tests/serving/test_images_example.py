"""examples/images: prepare it (PaddleOCR's text detector with its pre-processing built in),
serve its config, and send its sample files to the pipeline (the server decodes them) and to the
graph (a Python node decodes them), over gRPC and REST; each answer is checked against the same
model run in this process on the same file decoded and resized by OpenCV."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import openvino as ov
import pytest
import tritonclient.grpc as grpcclient
from serving_examples import prepared_copy, run_client
from serving_process import ServerProcess, free_port

SIZE = 640
SAMPLES = {"blank.jpg": 0, "one_word.png": 1, "three_words.jpg": 3}  # text regions drawn


@pytest.fixture(scope="module")
def example(
    ocr_detector: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, ServerProcess, int]]:
    root = tmp_path_factory.mktemp("images_example")
    folder = prepared_copy("images", root, "--detector", str(ocr_detector))
    rest_port = free_port()
    flags = ["--config_path", str(folder / "config.json"), "--rest_port", str(rest_port)]
    server = ServerProcess(flags, root)
    try:
        server.wait_ready()
        yield folder, server, rest_port
    finally:
        code = server.stop()
    assert code == 0, server.log()


@pytest.fixture(scope="module")
def reference(example) -> ov.CompiledModel:
    folder, _, _ = example
    model = folder / "models" / "text_det" / "1" / "model.xml"
    return ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})


def _expected_lines(arguments: tuple[str, ...], example) -> None:
    folder, server, _ = example
    output = run_client(folder, server.url, server.log(), *arguments)
    for name, regions in SAMPLES.items():
        assert f"{name}: {regions} text region(s)" in output, output


@pytest.mark.parametrize("target", ["find_text", "find_text_graph"])
def test_the_client_counts_the_drawn_words_over_grpc(example, target: str) -> None:
    _expected_lines(("--to", target), example)


def test_the_client_counts_the_drawn_words_over_rest(example) -> None:
    _expected_lines(("--rest", f"127.0.0.1:{example[2]}"), example)


@pytest.mark.parametrize("target", ["find_text", "find_text_graph"])
@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_answers_match_the_model_on_the_file_decoded_here(
    example, reference: ov.CompiledModel, target: str, sample: str
) -> None:
    folder, server, _ = example
    encoded = (folder / "samples" / sample).read_bytes()
    pixels = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_COLOR)
    pixels = cv2.resize(pixels, (SIZE, SIZE))[np.newaxis]
    expected = reference.create_infer_request().infer({"x": pixels})["sigmoid_0.tmp_0"]
    given = grpcclient.InferInput("image", [1], "BYTES")
    given.set_data_from_numpy(np.array([encoded], dtype=np.object_))
    with grpcclient.InferenceServerClient(server.url) as client:
        got = client.infer(target, [given]).as_numpy("text_map")
    assert got.shape == (1, 1, SIZE, SIZE)
    np.testing.assert_allclose(got, expected, atol=1e-5)
