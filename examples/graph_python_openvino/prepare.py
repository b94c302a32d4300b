"""Build the model the graph runs, with the OpenVINO Python API.

    python examples/graph_python_openvino/prepare.py
    ovmsx --config_path examples/graph_python_openvino/config.json --port 9000

``classifier``: FP32 ``features`` [1, 8] -> FP32 ``logits`` [1, 4] = features @ W + b, a
linear layer that scores eight brightness values as dark, bright, rising or falling. The graph
(classify/graph.pbtxt) scales UINT8 pixels to features in Python before it, and turns the
logits into probabilities and a label in Python after it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LABELS = ("dark", "bright", "rising", "falling")
WIDTH = 8  # features per request


def weights() -> tuple[np.ndarray, np.ndarray]:
    """(W [8, 4], b [4]): one column per label. Needs only numpy, so client.py can use it."""
    ramp = np.linspace(-1, 1, WIDTH, dtype=np.float32)
    columns = [-np.ones(WIDTH, np.float32), np.ones(WIDTH, np.float32), ramp, -ramp]
    return np.stack(columns, axis=1) * np.float32(3), np.array([12, -12, 0, 0], np.float32)


def build_model() -> Path:
    import openvino as ov  # imported here: the client imports weights() without OpenVINO
    import openvino.opset13 as ops

    w, b = weights()
    features = ops.parameter([1, WIDTH], ov.Type.f32, name="features")
    logits = ops.add(ops.matmul(features, ops.constant(w), False, False), ops.constant(b))
    logits.output(0).set_names({"logits"})
    path = HERE / "models" / "classifier" / "1" / "model.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov.Model([logits], [features], "classifier"), path, compress_to_fp16=False)
    return path


if __name__ == "__main__":
    print(f"model written to {build_model()}")
