"""Models and pipelines with image inputs, built with OpenVINO for the encoded-image tests.

Every model turns its input ``image`` into FP32 ``pixels`` unchanged (a convert, plus zero), so
an answer shows exactly what the server made of the images it was sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import serving_models as sm
from serving_pipelines import model_node, pipeline

REQ = "request"
F32 = {"INFERENCE_PRECISION_HINT": "f32"}

# name -> (input shape, element type, layout set in the model or None, extra config keys)
MODELS: dict[str, tuple[list, ov.Type, str | None, dict]] = {
    "u8_fixed": ([1, 4, 6, 3], ov.Type.u8, "NHWC", {}),
    "fp32_fixed": ([1, 4, 6, 3], ov.Type.f32, "NHWC", {}),
    "u8_batch3": ([3, 4, 6, 3], ov.Type.u8, "NHWC", {}),
    "u8_any": ([-1, -1, -1, 3], ov.Type.u8, "NHWC", {}),
    "u8_range": ([1, ov.Dimension(2, 5), ov.Dimension(3, 7), 3], ov.Type.u8, "NHWC", {}),
    "u8_default": ([1, 4, 6, 3], ov.Type.u8, None, {}),
    "u8_any_height": ([1, -1, 6, 3], ov.Type.u8, "NHWC", {}),
    "gray": ([1, 4, 6, 1], ov.Type.u8, "NHWC", {}),
    "four": ([1, 4, 6, 4], ov.Type.u8, "NHWC", {}),
    "int8": ([1, 4, 6, 3], ov.Type.i8, "NHWC", {}),
    "int64": ([1, 4, 6, 3], ov.Type.i64, "NHWC", {}),
    "nchw": ([1, 3, 4, 6], ov.Type.f32, "NCHW", {}),
    "nchw_as_nhwc": ([1, 3, 4, 6], ov.Type.f32, None, {"layout": "NHWC:NCHW"}),
    "flat": ([1, 10], ov.Type.f32, None, {}),
}


def image_model(shape: list, element: ov.Type, layout: str | None) -> ov.Model:
    x = ops.parameter(ov.PartialShape(shape), element, name="image")
    if layout is not None:
        x.set_layout(ov.Layout(layout))
    y = ops.add(ops.convert(x, ov.Type.f32), ops.constant(np.float32(0)))
    y.output(0).set_names({"pixels"})
    return ov.Model([y], [x], "pixels")


def scaled_image_model() -> ov.Model:
    """``image`` U8 [1,4,6,3] NHWC and ``scale`` FP32 [1] -> ``pixels`` = image * scale."""
    x = ops.parameter([1, 4, 6, 3], ov.Type.u8, name="image")
    x.set_layout(ov.Layout("NHWC"))
    scale = ops.parameter([1], ov.Type.f32, name="scale")
    y = ops.multiply(ops.convert(x, ov.Type.f32), scale)
    y.output(0).set_names({"pixels"})
    return ov.Model([y], [x, scale], "scaled")


def _pipelines() -> list[dict]:
    def through(model: str, **extra) -> dict:
        node = model_node("node", model, {"image": (REQ, "picture")}, {"pixels": "p"})
        return pipeline(f"pipe_{model}", ["picture"], [node], {"pixels": ("node", "p")}, **extra)

    dynamic = through("u8_fixed", demultiply_count=-1)
    dynamic["name"] = "pipe_demux_dynamic"
    static = through("u8_fixed", demultiply_count=2)
    static["name"] = "pipe_demux_two"
    return [through("u8_fixed"), through("nchw"), through("u8_any"), dynamic, static]


def write_servables(root: Path) -> Path:
    """The models above and the pipelines over them; returns the config's path."""
    entries = []
    for name, (shape, element, layout, extra) in MODELS.items():
        sm.save(image_model(shape, element, layout), root / name)
        entries.append(
            {"config": {"name": name, "base_path": str(root / name), "plugin_config": F32, **extra}}
        )
    sm.save(scaled_image_model(), root / "scaled")
    entries.append({"config": {"name": "scaled", "base_path": str(root / "scaled")}})
    config = {"model_config_list": entries, "pipeline_config_list": _pipelines()}
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path
