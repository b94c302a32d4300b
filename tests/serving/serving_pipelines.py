"""Pipeline configs for the pipeline tests: models built with OpenVINO, nodes wired as OVMS does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import serving_models as sm
import tritonclient.grpc as grpcclient


def model_node(
    name: str, model: str, sources: dict[str, tuple[str, str]], outputs: dict[str, str], **extra
) -> dict:
    """A "DL model" node; ``sources`` maps model input -> (node, data_item); ``outputs`` maps
    model output -> alias."""
    return {
        "name": name,
        "type": "DL model",
        "model_name": model,
        "inputs": [{i: {"node_name": n, "data_item": d}} for i, (n, d) in sources.items()],
        "outputs": [{"data_item": o, "alias": a} for o, a in outputs.items()],
        **extra,
    }


def custom_node(
    name: str, library: str, sources: dict[str, tuple[str, str]], outputs: dict[str, str], **extra
) -> dict:
    node = model_node(name, "", sources, outputs, **extra)
    node.update(type="custom", library_name=library)
    del node["model_name"]
    return node


def pipeline(
    name: str, inputs: list[str], nodes: list[dict], outputs: dict[str, tuple[str, str]], **extra
) -> dict:
    return {
        "name": name,
        "inputs": inputs,
        "nodes": nodes,
        "outputs": [{o: {"node_name": n, "data_item": d}} for o, (n, d) in outputs.items()],
        **extra,
    }


def _int_model() -> ov.Model:
    """INT32 [1,10] -> itself + 1: fed from an FP32 node, a precision mismatch."""
    x = ops.parameter([1, 10], ov.Type.i32, name="input")
    y = ops.add(x, ops.constant(np.int32(1)))
    y.output(0).set_names({"output"})
    return ov.Model([y], [x], "ints")


def build_models(root: Path) -> list[dict]:
    """add_one ([1,10] +1), plus_ten (dynamic +10), to_int (an INT32 input, for mismatches)."""
    sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "add_one")
    sm.save(sm.add_constant([-1, -1], 10, "plus_ten"), root / "plus_ten")
    sm.save(sm.add_constant([1, 5], 1, "five_wide"), root / "five_wide")
    sm.save(_int_model(), root / "ints")
    entries = [
        {"name": "ints", "base_path": str(root / "ints")},
        {"name": "add_one", "base_path": str(root / "add_one")},
        {"name": "plus_ten", "base_path": str(root / "plus_ten")},
        {"name": "five_wide", "base_path": str(root / "five_wide")},
    ]
    return [{"config": entry} for entry in entries]


def write_config(
    root: Path, pipelines: list[dict], libraries: list[dict] = (), models: list[dict] = ()
) -> Path:
    config = {
        "model_config_list": [*build_models(root), *models],
        "pipeline_config_list": pipelines,
        "custom_node_library_config_list": list(libraries),
    }
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def fp32_input(name: str, data: np.ndarray) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, list(data.shape), "FP32")
    given.set_data_from_numpy(data)
    return given
