"""Call the dummy_add graph with tritonclient and check its answer: out = (in1 + 1) + in2.

python examples/graph_openvino/client.py --url 127.0.0.1:9000
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import tritonclient.grpc as grpcclient


def fp32(name: str, values: np.ndarray) -> grpcclient.InferInput:
    tensor = grpcclient.InferInput(name, list(values.shape), "FP32")
    tensor.set_data_from_numpy(values)
    return tensor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="127.0.0.1:9000")
    url = parser.parse_args().url
    in1 = np.arange(10, dtype=np.float32).reshape(1, 10)
    in2 = np.full((1, 10), 100, np.float32)
    with grpcclient.InferenceServerClient(url) as client:
        result = client.infer("dummy_add", [fp32("in1", in1), fp32("in2", in2)])
    out = result.as_numpy("out")
    print("out:", out)
    if not np.array_equal(out, in1 + 1 + in2):
        print("unexpected answer", file=sys.stderr)
        return 1
    print("ok: the graph ran dummy, then add")
    return 0


if __name__ == "__main__":
    sys.exit(main())
