"""Send pixel rows to the classify graph and check its answers against numpy.

    python examples/graph_python_openvino/client.py --url 127.0.0.1:9000

The reference is computed here with the same weights (``prepare.weights``): features =
pixels / 255, logits = features @ W + b, probabilities = softmax(logits), label = argmax.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import tritonclient.grpc as grpcclient
from prepare import LABELS, WIDTH, weights

# name -> pixels, and the label each one must get
CASES = {
    "black row": (np.zeros(WIDTH, np.uint8), "dark"),
    "white row": (np.full(WIDTH, 255, np.uint8), "bright"),
    "left-to-right ramp": (np.linspace(0, 255, WIDTH).astype(np.uint8), "rising"),
    "right-to-left ramp": (np.linspace(255, 0, WIDTH).astype(np.uint8), "falling"),
}


def reference(pixels: np.ndarray) -> np.ndarray:
    w, b = weights()
    logits = (pixels.astype(np.float32) / np.float32(255)) @ w + b
    exp = np.exp(logits - logits.max())
    return exp / exp.sum()


def classify(client: grpcclient.InferenceServerClient, pixels: np.ndarray):
    given = grpcclient.InferInput("pixels", [len(pixels)], "UINT8")
    given.set_data_from_numpy(pixels)
    result = client.infer("classify", [given])
    return result.as_numpy("probabilities"), result.as_numpy("label")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="127.0.0.1:9000")
    url = parser.parse_args().url
    failures = 0
    with grpcclient.InferenceServerClient(url) as client:
        for name, (pixels, expected) in CASES.items():
            probabilities, label = classify(client, pixels)
            got = LABELS[int(label[0])]
            print(f"{name}: {pixels.tolist()} -> {got} (p={probabilities.max():.3f})")
            same = np.allclose(probabilities, reference(pixels), rtol=1e-5, atol=1e-6)
            if got != expected or not same or label.dtype != np.int32:
                print(f"  expected {expected}, probabilities {reference(pixels)}", file=sys.stderr)
                failures += 1
    if failures:
        return 1
    print("ok: the graph's answers match numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
