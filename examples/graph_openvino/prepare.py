"""Build the two models the graph runs, with the OpenVINO Python API.

    python examples/graph_openvino/prepare.py
    ovmsx --config_path examples/graph_openvino/config.json --port 9000

``dummy``: FP32 ``b`` [1,10] -> ``a`` = b + 1. ``add``: FP32 ``input1``, ``input2`` [1,10] ->
``sum`` = input1 + input2. The graph (dummy_add/graph.pbtxt) computes (in1 + 1) + in2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops

HERE = Path(__file__).resolve().parent


def _save(model: ov.Model, name: str) -> None:
    path = HERE / "models" / name / "1" / "model.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, path, compress_to_fp16=False)


def build_models() -> None:
    b = ops.parameter([1, 10], ov.Type.f32, name="b")
    a = ops.add(b, ops.constant(np.float32(1)))
    a.output(0).set_names({"a"})
    _save(ov.Model([a], [b], "dummy"), "dummy")
    input1 = ops.parameter([1, 10], ov.Type.f32, name="input1")
    input2 = ops.parameter([1, 10], ov.Type.f32, name="input2")
    total = ops.add(input1, input2)
    total.output(0).set_names({"sum"})
    _save(ov.Model([total], [input1, input2], "add"), "add")


if __name__ == "__main__":
    build_models()
    print(f"models written under {HERE / 'models'}")
