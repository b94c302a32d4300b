"""Streams a prompt to the python_generative graph and prints the tokens as they arrive.

Start the server in one shell:

    ovmsx --config_path examples/python_generative/config.json --port 9000

then run this script in another. The graph answers with the prompt's words in reverse order,
one response per word, then an ``end`` response with the word count. The script exits with
status 1 if the answer is wrong.
"""

import argparse
import queue
import sys

import numpy as np
import tritonclient.grpc as grpcclient

GRAPH = "python_generative"
DEFAULT_PROMPT = "streaming tokens from a python node one word at a time"
RESPONSE_TIMEOUT_SECONDS = 30


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="127.0.0.1:9000")
    parser.add_argument("--prompt", default=DEFAULT_PROMPT)
    args = parser.parse_args()

    # A BYTES tensor of one element. set_data_from_numpy sends it in the KServe layout,
    # a 4-byte little-endian length and then the bytes; the node unpacks that.
    prompt = grpcclient.InferInput("prompt", [1], "BYTES")
    prompt.set_data_from_numpy(np.array([args.prompt.encode("utf-8")], dtype=np.object_))

    responses: queue.Queue = queue.Queue()
    tokens: list[str] = []
    count = None
    with grpcclient.InferenceServerClient(args.url) as client:
        client.start_stream(callback=lambda result, error: responses.put((result, error)))
        try:
            client.async_stream_infer(GRAPH, [prompt])
            print("prompt:", args.prompt)
            while count is None:
                result, error = responses.get(timeout=RESPONSE_TIMEOUT_SECONDS)
                if error is not None:
                    print(f"\nstream error: {error}", file=sys.stderr)
                    return 1
                response = result.get_response()
                names = [output.name for output in response.outputs]
                timestamp = response.parameters["OVMS_MP_TIMESTAMP"].int64_param
                if "token" in names:
                    token = result.as_numpy("token")[0].decode("utf-8")
                    tokens.append(token)
                    print(f"token: {token!r:<14} timestamp {timestamp}", flush=True)
                elif "end" in names:
                    count = int(result.as_numpy("end")[0])
                    print(f"end:   {f'{count} tokens':<14} timestamp {timestamp}")
                else:
                    print(f"unexpected outputs {names}", file=sys.stderr)
                    return 1
        finally:
            client.stop_stream()

    expected = list(reversed(args.prompt.split()))
    print("answer:", " ".join(tokens))
    if tokens != expected or count != len(expected):
        print(f"wrong answer: expected {expected} and end = {len(expected)}", file=sys.stderr)
        return 1
    print("ok: the words came back in reverse order, one response each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
