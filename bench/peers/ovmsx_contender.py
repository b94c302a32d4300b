"""ovmsx's side of the comparison: the same models as bench_serving.py serves (OpenVINO IR and
the ONNX detector, bench_models.write_config) plus the one-node Python graph of bench_graphs.py,
in one config.json, started with bench_serving.start_ovmsx."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import bench_graphs
import bench_models
from bench_serving import Server, start_ovmsx

GRAPH = "py_add_one"


def write_config(models: Sequence[bench_models.BenchModel], root: Path, with_graph: bool) -> Path:
    config_path = bench_models.write_config(models, root / "config.json")
    if with_graph:
        folder = root / GRAPH
        folder.mkdir()
        # bench_graphs.py's own graph: one PythonExecutorCalculator adding 1 with numpy.
        (folder / "graph.pbtxt").write_text(bench_graphs._chain(1))
        (folder / "add_one.py").write_text(bench_graphs.ADD_ONE_HANDLER)
        config = json.loads(config_path.read_text())
        config["mediapipe_config_list"] = [{"name": GRAPH}]
        config_path.write_text(json.dumps(config, indent=2) + "\n")
    return config_path


def start(command: str, config: Path, root: Path) -> AbstractContextManager[Server]:
    return start_ovmsx(shlex.split(command), config, root)
