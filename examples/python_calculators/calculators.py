"""The two calculators this example's graphs use, written in Python.

The server imports this file once for both graphs (``"calculator_modules":
["../calculators.py"]`` in config.json, relative to each graph's folder); ``@register_calculator``
makes each class a ``calculator:`` name. One instance is made per graph run (here: per
request), and ``self.options`` holds the node's ``PythonCalculatorOptions`` params.
"""

from __future__ import annotations

import numpy as np

from ovmsx import Tensor
from ovmsx.calculators import (
    CalculatorContext,
    ImageFrame,
    ModelInferRequest,
    ModelInferResponse,
    NodeFailure,
    PythonCalculator,
    register_calculator,
)


@register_calculator
class EchoRequest(PythonCalculator):
    """REQUEST -> RESPONSE: each input back as an output of the same name and data (raw or
    typed, as it came), with the parameters ``echoed_inputs`` (how many) and ``note`` (the
    node's ``note`` option). A REQUEST calculator sees the request as sent, so any input
    names, datatypes and shapes are fine: checking them is its own business."""

    INPUTS = ("REQUEST",)
    OUTPUTS = ("RESPONSE",)

    def process(self, context: CalculatorContext) -> None:
        request: ModelInferRequest = context.input("REQUEST")
        response = ModelInferResponse()
        for index, given in enumerate(request.inputs):
            output = response.outputs.add(
                name=given.name, datatype=given.datatype, shape=given.shape
            )
            if request.raw_input_contents:
                response.raw_output_contents.append(request.raw_input_contents[index])
            else:
                output.contents.CopyFrom(given.contents)
        response.parameters["echoed_inputs"].int64_param = len(request.inputs)
        response.parameters["note"].string_param = self.options.get("note", "")
        context.output("RESPONSE", response)


def _positive(options, key: str) -> int:
    value = options.get(key, "")
    if not value.isdigit() or int(value) == 0:
        raise ValueError(f'option {key} must be a positive integer, not "{value}"')
    return int(value)


@register_calculator
class ImagePreprocess(PythonCalculator):
    """IMAGE (8-bit, 1, 3 or 4 channels, HWC) -> OVTENSOR ``[1, 3, height, width]`` FP32:
    nearest-neighbour resize to the ``height`` x ``width`` options, gray repeated to three
    channels, alpha dropped, values scaled to [0, 1], channels first."""

    INPUTS = ("IMAGE",)
    OUTPUTS = ("OVTENSOR",)

    @classmethod
    def check_node(cls, node) -> None:
        # Runs at graph load: a bad option keeps the graph from loading, naming this node.
        options = node.options.get("mediapipe.PythonCalculatorOptions")
        params = options.params if options else {}
        _positive(params, "height")
        _positive(params, "width")

    def open(self, context: CalculatorContext) -> None:
        self.height = _positive(self.options, "height")
        self.width = _positive(self.options, "width")

    def process(self, context: CalculatorContext) -> None:
        frame: ImageFrame = context.input("IMAGE")
        if frame.format not in ("GRAY8", "SRGB", "SRGBA"):
            raise NodeFailure(
                f"expected 8-bit pixels, got a {frame.format} image", "INVALID_ARGUMENT"
            )
        pixels = frame.numpy()  # [H, W, C] uint8, a view of the request's bytes
        rows = np.arange(self.height) * frame.height // self.height
        cols = np.arange(self.width) * frame.width // self.width
        small = pixels[rows][:, cols]
        if frame.channels == 1:
            small = np.repeat(small, 3, axis=2)
        chw = small[:, :, :3].astype(np.float32).transpose(2, 0, 1) / 255
        context.output("OVTENSOR", Tensor("image", np.ascontiguousarray(chw[np.newaxis])))
