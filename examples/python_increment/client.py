"""Sends [1, 2, 3] through the python_increment graph and expects [4, 5, 6] back.

Start the server in one shell:

    ovmsx --config_path examples/python_increment/config.json --port 9000

then run this script in another. It exits with status 1 if the answer is wrong.
"""

import argparse
import sys

import numpy as np
import tritonclient.grpc as grpcclient

GRAPH = "python_increment"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="127.0.0.1:9000")
    args = parser.parse_args()

    numbers = np.array([1, 2, 3], dtype=np.float32)
    request = grpcclient.InferInput("first_number", list(numbers.shape), "FP32")
    request.set_data_from_numpy(numbers)

    with grpcclient.InferenceServerClient(args.url) as client:
        result = client.infer(GRAPH, [request])

    answer = result.as_numpy("last_number")
    response = result.get_response()
    output = response.outputs[0]
    timestamp = response.parameters["OVMS_MP_TIMESTAMP"].int64_param
    print("sent:        ", numbers)
    print("received:    ", answer, f"({output.datatype}, shape {list(output.shape)})")
    print("timestamp:   ", timestamp)

    expected = numbers + 3
    if answer is None or not np.array_equal(answer, expected):
        print(f"wrong answer: expected {expected}", file=sys.stderr)
        return 1
    print("ok: each of the three nodes added one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
