"""Send image files from disk to the text detector and say how many text regions each holds.

    python examples/images/client.py --url 127.0.0.1:9000                    # samples/, pipeline
    python examples/images/client.py --url 127.0.0.1:9000 --to find_text_graph photo.jpg
    python examples/images/client.py --rest 127.0.0.1:8000 photo.jpg       # REST, binary data

Each file goes as it is on disk, one BYTES element: the server decodes it (``find_text``: ovmsx
itself, as OVMS does for an image input; ``find_text_graph``: a Python node in the graph),
resizes it to the model's 640x640 and answers with ``text_map``, each pixel's probability of
being text. The client thresholds that map and counts the connected regions.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

HERE = Path(__file__).resolve().parent
THRESHOLD = 0.3  # PaddleOCR's own binarization threshold for this detector
MIN_AREA = 30  # pixels of the 640x640 map; smaller blobs are noise


def text_regions(text_map: np.ndarray) -> int:
    """Connected regions of the thresholded map, not counting specks."""
    mask = (np.asarray(text_map).reshape(text_map.shape[-2:]) > THRESHOLD).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    return int(np.sum(stats[1:count, cv2.CC_STAT_AREA] >= MIN_AREA))


def infer_grpc(url: str, target: str, encoded: bytes) -> np.ndarray:
    import tritonclient.grpc as grpcclient

    given = grpcclient.InferInput("image", [1], "BYTES")
    given.set_data_from_numpy(np.array([encoded], dtype=np.object_))
    with grpcclient.InferenceServerClient(url) as client:
        return client.infer(target, [given]).as_numpy("text_map")


def infer_rest(url: str, target: str, encoded: bytes) -> np.ndarray:
    import tritonclient.http as httpclient

    given = httpclient.InferInput("image", [1], "BYTES")
    given.set_data_from_numpy(np.array([encoded], dtype=np.object_), binary_data=True)
    wanted = [httpclient.InferRequestedOutput("text_map", binary_data=True)]
    with httpclient.InferenceServerClient(url) as client:
        return client.infer(target, [given], outputs=wanted).as_numpy("text_map")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="images (default: samples/*)")
    parser.add_argument("--url", default="127.0.0.1:9000", help="gRPC address")
    parser.add_argument("--rest", metavar="URL", help="REST address: send over REST instead")
    parser.add_argument("--to", default="find_text", help="find_text (pipeline) or find_text_graph")
    args = parser.parse_args()
    files = args.files or sorted((HERE / "samples").iterdir())
    for path in files:
        encoded = path.read_bytes()
        if args.rest:
            text_map = infer_rest(args.rest, args.to, encoded)
        else:
            text_map = infer_grpc(args.url, args.to, encoded)
        print(f"{path.name}: {text_regions(text_map)} text region(s)")


if __name__ == "__main__":
    main()
