"""Build the example's models with the OpenVINO Python API and write its config.json.

The config names the built-in custom nodes by their paths inside the installed ovmsx wheel,
which differ from machine to machine, so it is written here rather than checked in.

    python examples/pipelines/prepare.py
    ovmsx --config_path examples/pipelines/config.json --port 9000
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops

import ovmsx.custom_nodes

HERE = Path(__file__).resolve().parent


def _save(model: ov.Model, name: str) -> None:
    path = HERE / "models" / name / "1" / "model.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, path, compress_to_fp16=False)


def build_models() -> None:
    # flatten: the 2x5 gray image [1,1,2,5] as a row of 10 numbers.
    image = ops.parameter([1, 1, 2, 5], ov.Type.f32, name="image")
    row = ops.reshape(image, ops.constant(np.array([1, 10], np.int64)), special_zero=False)
    row.output(0).set_names({"row"})
    _save(ov.Model([row], [image], "flatten"), "flatten")
    # double: [1,10] * 2.
    x = ops.parameter([1, 10], ov.Type.f32, name="x")
    y = ops.multiply(x, ops.constant(np.float32(2)))
    y.output(0).set_names({"y"})
    _save(ov.Model([y], [x], "double"), "double")


def source(node: str, item: str) -> dict:
    return {"node_name": node, "data_item": item}


def plus_one(input_source: dict) -> dict:
    """The built-in add_one custom node (default params: + 1) reading ``input_source``."""
    return {
        "name": "plus_one",
        "type": "custom",
        "library_name": "add_one",
        "inputs": [{"input_numbers": input_source}],
        "outputs": [{"data_item": "output_numbers", "alias": "numbers"}],
    }


def config() -> dict:
    libraries = [
        {"name": name, "base_path": str(ovmsx.custom_nodes.built_in(name))}
        for name in ("image_transformation", "add_one")
    ]
    image_to_numbers = {
        "name": "image_to_numbers",
        "inputs": ["image"],
        "nodes": [
            {
                "name": "transform",
                "type": "custom",
                "library_name": "image_transformation",
                "params": {
                    "original_image_layout": "NHWC",
                    "target_image_layout": "NCHW",
                    "original_image_color_order": "BGR",
                    "target_image_color_order": "GRAY",
                    "target_image_width": "5",
                    "target_image_height": "2",
                },
                "inputs": [{"image": source("request", "image")}],
                "outputs": [{"data_item": "image", "alias": "small_gray"}],
            },
            {
                "name": "flatten",
                "type": "DL model",
                "model_name": "flatten",
                "inputs": [{"image": source("transform", "small_gray")}],
                "outputs": [{"data_item": "row", "alias": "row"}],
            },
            plus_one(source("flatten", "row")),
        ],
        "outputs": [{"numbers": source("plus_one", "numbers")}],
    }
    per_row = {
        "name": "per_row",
        "inputs": ["rows"],
        # Split the request along its first dimension: every row runs the nodes on its own,
        # all rows at once, and the response stacks the rows back.
        "demultiply_count": -1,
        "nodes": [
            {
                "name": "double",
                "type": "DL model",
                "model_name": "double",
                "inputs": [{"x": source("request", "rows")}],
                "outputs": [{"data_item": "y", "alias": "doubled"}],
            },
            plus_one(source("double", "doubled")),
        ],
        "outputs": [{"rows_out": source("plus_one", "numbers")}],
    }
    models = [
        {"config": {"name": name, "base_path": f"models/{name}"}} for name in ("flatten", "double")
    ]
    return {
        "model_config_list": models,
        "custom_node_library_config_list": libraries,
        "pipeline_config_list": [image_to_numbers, per_row],
    }


def main() -> None:
    build_models()
    (HERE / "config.json").write_text(json.dumps(config(), indent=2) + "\n")
    print(f"wrote {HERE / 'config.json'} and models/")


if __name__ == "__main__":
    main()
