"""Build the text detector this example serves, and a few images to send it.

    python examples/images/prepare.py                 # downloads the detector once, with pip
    python examples/images/prepare.py --detector det.onnx     # a copy already on disk

The model is PaddleOCR's text detector, the ``.onnx`` file shipped inside the
``rapidocr-onnxruntime`` wheel on PyPI. It expects BGR pixels scaled to [-1, 1] in NCHW order.
This script saves it as OpenVINO IR with that pre-processing built in (OpenVINO's
PrePostProcessor), so the served model takes what ovmsx makes of a JPEG or PNG: UINT8 pixels,
BGR, ``[1, 640, 640, 3]`` in NHWC. Its output ``sigmoid_0.tmp_0`` [1, 1, 640, 640] is each
pixel's probability of being text.

``samples/`` gets four images drawn with OpenCV: a JPEG with three words, a PNG with one, a
blank JPEG, and ``street.jpg``, a photo-like street scene with a shop sign (camera noise, soft
edges), the kind of file a client sends from a camera.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WHEEL = "rapidocr-onnxruntime==1.4.4"
MEMBER = "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"
MODEL = HERE / "models" / "text_det" / "1" / "model.xml"
SAMPLES = HERE / "samples"
SIZE = 640  # the model's input side; find_text_graph/decode.py resizes to it too


def download_detector(folder: Path) -> Path:
    """The detector's .onnx from the wheel (pip download, no dependencies)."""
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
    command += ["--only-binary=:all:", WHEEL, "-d", str(folder)]
    subprocess.run(command, check=True)
    wheel = next(folder.glob("rapidocr_onnxruntime-*.whl"))
    target = folder / Path(MEMBER).name
    with zipfile.ZipFile(wheel) as archive:
        target.write_bytes(archive.read(MEMBER))
    return target


def build_model(detector: Path) -> Path:
    import openvino as ov
    from openvino.preprocess import PrePostProcessor

    model = ov.Core().read_model(detector)
    model.reshape({model.input(0).get_any_name(): [1, 3, SIZE, SIZE]})
    steps = PrePostProcessor(model)
    steps.input().tensor().set_element_type(ov.Type.u8).set_layout(ov.Layout("NHWC"))
    # PaddleOCR's own pre-processing: x / 255, minus 0.5, over 0.5 = (x - 127.5) / 127.5.
    steps.input().preprocess().convert_element_type(ov.Type.f32).mean(127.5).scale(127.5)
    steps.input().model().set_layout(ov.Layout("NCHW"))
    MODEL.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(steps.build(), MODEL, compress_to_fp16=False)
    return MODEL


def street_scene():
    """A photo-like picture: sky, a brick wall with a lit shop sign, pavement, and the sensor
    noise and soft edges of a camera (seeded, so every run draws the same file)."""
    import cv2
    import numpy as np

    height, width = 720, 960
    rows = np.linspace(0.0, 1.0, height)[:, None, None]
    sky = (235 - 70 * rows) * np.array([1.0, 0.85, 0.6])  # BGR: pale blue, darker upwards
    scene = np.broadcast_to(sky, (height, width, 3)).copy()
    scene[260:600] = (70, 80, 150)  # the wall
    for top in range(260, 600, 24):  # mortar lines
        scene[top : top + 3] = (150, 160, 175)
    scene[600:] = (95, 100, 105)  # the pavement
    cv2.rectangle(scene, (250, 300), (710, 420), (30, 30, 30), -1)  # the sign
    cv2.putText(scene, "BAKERY", (285, 390), cv2.FONT_HERSHEY_DUPLEX, 2.6, (120, 230, 255), 6)
    cv2.rectangle(scene, (330, 450), (630, 600), (40, 50, 60), -1)  # the shop window
    noise = np.random.default_rng(7).normal(0.0, 6.0, scene.shape)
    pixels = np.clip(cv2.GaussianBlur(scene, (5, 5), 1.2) + noise, 0, 255)
    return pixels.astype(np.uint8)


def write_samples() -> list[Path]:
    import cv2
    import numpy as np

    SAMPLES.mkdir(exist_ok=True)
    words = np.full((480, 640, 3), 255, np.uint8)
    for row, word in enumerate(("serving", "encoded", "images")):
        cv2.putText(words, word, (40, 120 + row * 140), cv2.FONT_HERSHEY_SIMPLEX, 3, (0, 0, 0), 8)
    one = np.full((300, 800, 3), 255, np.uint8)
    cv2.putText(one, "ovmsx", (150, 190), cv2.FONT_HERSHEY_DUPLEX, 4, (40, 20, 160), 10)
    blank = np.full((400, 400, 3), 255, np.uint8)
    files = {
        "three_words.jpg": words,
        "one_word.png": one,
        "blank.jpg": blank,
        "street.jpg": street_scene(),
    }
    for name, pixels in files.items():
        cv2.imwrite(str(SAMPLES / name), pixels)
    return [SAMPLES / name for name in files]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--detector", type=Path, help="the detector .onnx (default: download)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        detector = args.detector or download_detector(Path(folder))
        print(f"model written to {build_model(detector)}")
    for path in write_samples():
        print(f"sample written to {path}")


if __name__ == "__main__":
    main()
