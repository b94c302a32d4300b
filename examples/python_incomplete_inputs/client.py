"""Streams labels once, then images, to the python_incomplete_inputs graph; checks the answers.

Start the server in one shell:

    ovmsx --config_path examples/python_incomplete_inputs/config.json --port 9000

then run this script in another. It opens two streams at the same time, one labelled with
animals and one with colours, and sends both the same images: each stream answers with its
own labels. The script exits with status 1 if an answer is wrong.
"""

import argparse
import queue
import sys

import numpy as np
import tritonclient.grpc as grpcclient

GRAPH = "python_incomplete_inputs"
RESPONSE_TIMEOUT_SECONDS = 30

LABEL_SETS = {
    "animals": ["cat", "dog", "bird"],
    "colours": ["red", "green", "blue"],
}
# Each "image" holds one score per label; the graph answers the label of the highest score.
IMAGES = [
    np.array([0.7, 0.2, 0.1], dtype=np.float32),
    np.array([0.1, 0.1, 0.8], dtype=np.float32),
    np.array([0.3, 0.6, 0.1], dtype=np.float32),
    np.array([0.5, 0.1, 0.4], dtype=np.float32),
]


def labels_input(labels: list[str]) -> grpcclient.InferInput:
    tensor = grpcclient.InferInput("labels", [len(labels)], "BYTES")
    tensor.set_data_from_numpy(np.array([label.encode() for label in labels], dtype=np.object_))
    return tensor


def image_input(image: np.ndarray) -> grpcclient.InferInput:
    tensor = grpcclient.InferInput("image", list(image.shape), "FP32")
    tensor.set_data_from_numpy(image)
    return tensor


class Stream:
    """One ModelStreamInfer call on a client of its own (a client holds one stream)."""

    def __init__(self, url: str, name: str) -> None:
        self.name = name
        self.client = grpcclient.InferenceServerClient(url)
        self.responses: queue.Queue = queue.Queue()
        self.client.start_stream(callback=lambda result, error: self.responses.put((result, error)))

    def send(self, tensor: grpcclient.InferInput) -> None:
        self.client.async_stream_infer(GRAPH, [tensor])

    def answer(self) -> str:
        try:
            result, error = self.responses.get(timeout=RESPONSE_TIMEOUT_SECONDS)
        except queue.Empty:
            raise RuntimeError(f"{self.name}: no answer in {RESPONSE_TIMEOUT_SECONDS} s") from None
        if error is not None:
            raise RuntimeError(f"{self.name}: stream error: {error}")
        return result.as_numpy("result")[0].decode("utf-8")

    def close(self) -> None:
        self.client.stop_stream()
        self.client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="127.0.0.1:9000")
    args = parser.parse_args()

    streams = {name: Stream(args.url, name) for name in LABEL_SETS}
    wrong = 0
    try:
        # The labels go once per stream, in a request without an image: the node keeps them
        # and answers nothing.
        for name, stream in streams.items():
            print(f"{name}: labels {LABEL_SETS[name]}")
            stream.send(labels_input(LABEL_SETS[name]))
        # Then only images, one request each, interleaved between the two streams.
        for image in IMAGES:
            for stream in streams.values():
                stream.send(image_input(image))
        for name, stream in streams.items():
            for image in IMAGES:
                got = stream.answer()
                expected = LABEL_SETS[name][int(np.argmax(image))]
                verdict = "ok" if got == expected else f"WRONG, expected {expected!r}"
                scores = ", ".join(f"{score:g}" for score in image)
                print(f"{name}: image [{scores}] -> {got!r} {verdict}")
                wrong += got != expected
    finally:
        for stream in streams.values():
            stream.close()

    if wrong:
        print(f"{wrong} wrong answers", file=sys.stderr)
        return 1
    print("ok: each stream answered with its own labels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
