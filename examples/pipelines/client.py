"""Call the example pipelines with tritonclient and check the answers.

python examples/pipelines/client.py --url 127.0.0.1:9000
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import tritonclient.grpc as grpcclient


def fp32(name: str, data: np.ndarray) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, list(data.shape), "FP32")
    given.set_data_from_numpy(data)
    return given


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="127.0.0.1:9000")
    args = parser.parse_args()
    ok = True
    with grpcclient.InferenceServerClient(args.url) as client:
        # A flat gray BGR image (every pixel 100,100,100): resized to 2x5 gray it stays 100.
        image = np.full((1, 6, 8, 3), 100.0, np.float32)
        numbers = client.infer("image_to_numbers", [fp32("image", image)]).as_numpy("numbers")
        print("image_to_numbers:", numbers.round(3).tolist())
        ok &= numbers.shape == (1, 10) and np.allclose(numbers, 101.0, atol=1e-3)

        rows = np.arange(30, dtype=np.float32).reshape(3, 1, 10)
        answer = client.infer("per_row", [fp32("rows", rows)]).as_numpy("rows_out")
        print("per_row shape:", answer.shape, "first row:", answer[0, 0, :4].tolist(), "...")
        ok &= answer.shape == (3, 1, 10) and np.array_equal(answer, rows * 2 + 1)
    print("ok: both pipelines answered as expected" if ok else "WRONG ANSWER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
