"""Sends one FP32 row to the ``scaled`` pipeline (the scale custom node, factor 3) and checks
that every number came back multiplied by 3.

    python examples/custom_node_scale/client.py --url 127.0.0.1:9000
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import tritonclient.grpc as grpcclient


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", default="127.0.0.1:9000")
    args = parser.parse_args()

    values = np.arange(1, 6, dtype=np.float32).reshape(1, 5)
    tensor = grpcclient.InferInput("values", list(values.shape), "FP32")
    tensor.set_data_from_numpy(values)
    with grpcclient.InferenceServerClient(args.url) as client:
        result = client.infer("scaled", [tensor]).as_numpy("scaled")
    print("values:", values[0].tolist())
    print("scaled:", result[0].tolist())
    if not np.array_equal(result, values * 3):
        sys.exit("expected every value times 3")


if __name__ == "__main__":
    main()
