"""What the security tests serve: a model that copies bytes, and a graph whose Python node
holds each request until the test lets it go (so requests stay in flight without timing).

The ``gate`` node appends the size of each request it starts to ``<graph>/entered``, then waits
until ``<graph>/open`` exists.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import openvino as ov
import openvino.opset13 as ops
from serving_graphs import graph_text, python_node
from serving_models import save

GATE = """
    import os
    import time

    import numpy as np
    from pyovms import Tensor


    class OvmsPythonModel:
        def initialize(self, kwargs):
            self.output = kwargs["output_names"][0]
            self.folder = kwargs["base_path"]

        def execute(self, inputs):
            size = len(bytes(inputs[0]))
            with open(os.path.join(self.folder, "entered"), "a") as entered:
                entered.write(f"{size}\\n")
            while not os.path.exists(os.path.join(self.folder, "open")):
                time.sleep(0.01)
            return [Tensor(self.output, np.array([size], np.int64))]
"""


def copy_bytes() -> ov.Model:
    """UINT8 ``input`` [-1] -> ``output``, a copy."""
    x = ops.parameter([-1], ov.Type.u8, name="input")
    y = ops.convert(ops.convert(x, ov.Type.i32), ov.Type.u8)
    model = ov.Model([y], [x], "copy")
    model.outputs[0].get_tensor().set_names({"output"})
    return model


def write_servables(root: Path) -> Path:
    """``root/config.json`` serving the model ``copy`` and the graph ``gate``."""
    save(copy_bytes(), root / "copy")
    gate = root / "gate"
    gate.mkdir()
    (gate / "gate.py").write_text(textwrap.dedent(GATE))
    (gate / "graph.pbtxt").write_text(
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [python_node("gate", "gate.py", ["INPUT:input"], ["OUTPUT:output"])],
        )
    )
    config = {
        "model_config_list": [{"config": {"name": "copy", "base_path": str(root / "copy")}}],
        "mediapipe_config_list": [{"name": "gate", "base_path": str(gate)}],
    }
    (root / "config.json").write_text(json.dumps(config))
    return root / "config.json"
