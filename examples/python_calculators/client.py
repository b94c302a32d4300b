"""Call both graphs with tritonclient and check their answers.

python examples/python_calculators/client.py --url 127.0.0.1:9000
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

SIZE = 32  # the height and width options of image_mean's preprocess node


def tensor(name: str, values: np.ndarray, datatype: str) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, list(values.shape), datatype)
    given.set_data_from_numpy(values)
    return given


def expected_means(image: np.ndarray) -> np.ndarray:
    """What the graph should answer: nearest-neighbour resize, three channels, mean of each."""
    height, width, _ = image.shape
    rows = np.arange(SIZE) * height // SIZE
    cols = np.arange(SIZE) * width // SIZE
    small = image[rows][:, cols].astype(np.float32) / 255
    if small.shape[2] == 1:
        small = np.repeat(small, 3, axis=2)
    return small[:, :, :3].mean(axis=(0, 1))[np.newaxis]


def check_echo(client: grpcclient.InferenceServerClient) -> bool:
    numbers = np.arange(6, dtype=np.float32).reshape(2, 3)
    words = np.array([b"any", b"input", b"goes"], dtype=np.object_)
    result = client.infer(
        "echo_request", [tensor("numbers", numbers, "FP32"), tensor("words", words, "BYTES")]
    )
    parameters = result.get_response().parameters
    print("echo_request numbers:", result.as_numpy("numbers").tolist())
    print("echo_request words:  ", result.as_numpy("words").tolist())
    print("echo_request echoed_inputs:", parameters["echoed_inputs"].int64_param)
    print("echo_request note:", parameters["note"].string_param)
    return (
        np.array_equal(result.as_numpy("numbers"), numbers)
        and list(result.as_numpy("words")) == list(words)
        and parameters["echoed_inputs"].int64_param == 2
        and parameters["note"].string_param == "answered by a Python calculator"
    )


def check_image_mean(client: grpcclient.InferenceServerClient) -> bool:
    rng = np.random.default_rng(0)
    good = True
    for shape in ((48, 64, 3), (20, 30, 1), (33, 17, 4)):
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        result = client.infer("image_mean", [tensor("image", image, "UINT8")])
        means = result.as_numpy("channel_mean")
        print(f"image_mean {list(shape)}: {np.array2string(means, precision=4)}")
        good = good and np.allclose(means, expected_means(image), rtol=1e-5, atol=1e-6)
    # A float image is a valid IMAGE input (VEC32F*), but this calculator wants 8-bit pixels.
    try:
        client.infer("image_mean", [tensor("image", np.zeros((4, 4, 1), np.float32), "FP32")])
    except InferenceServerException as refused:
        print("a float image is refused:", refused.message())
        good = good and "expected 8-bit pixels, got a VEC32F1 image" in refused.message()
    else:
        good = False
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="127.0.0.1:9000")
    url = parser.parse_args().url
    with grpcclient.InferenceServerClient(url) as client:
        good = check_echo(client) and check_image_mean(client)
    if not good:
        print("unexpected answer", file=sys.stderr)
        return 1
    print("ok: both graphs answered as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
