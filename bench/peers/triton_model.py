"""Triton Python-backend model (copied as ``<repository>/<name>/1/model.py``).

Triton's Python stub runs this file; ``spec.json`` beside it (written by triton_peer.py) names
the tensors, what to compute (peer_compute.make) and the folders to import from: the peer
venv's site-packages, since the stub's own environment lacks openvino, and the folder
holding peer_compute.py.
"""

import json
import sys
from pathlib import Path

SPEC = json.loads((Path(__file__).parent / "spec.json").read_text())
sys.path[:0] = SPEC["python_path"]

import peer_compute  # noqa: E402
import triton_python_backend_utils as pb_utils  # noqa: E402


class TritonPythonModel:
    def initialize(self, args: dict) -> None:
        self.input, self.output = SPEC["input"], SPEC["output"]
        self.compute = peer_compute.make(**SPEC["compute"])

    def execute(self, requests: list) -> list:
        # One response per request, in order (the Python backend's contract).
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, self.input).as_numpy()
            y = self.compute(x)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor(self.output, y)]))
        return responses
