"""Configs for the health tests: a model, a model that cannot load, a pipeline and graphs."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_process import READY_TIMEOUT, ServerProcess
from tritonclient.utils import InferenceServerException

F32 = {"INFERENCE_PRECISION_HINT": "f32"}

ECHO_GRAPH = """
input_stream: "OVMS_PY_TENSOR:input"
output_stream: "OVMS_PY_TENSOR:output"
node {
  name: "echo"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT:input"
  output_stream: "OUTPUT:output"
  node_options: {
    [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: { handler_path: "echo.py" }
  }
}
"""

# A Python node whose graph loads only once the file ``gate`` (next to it) exists: the test,
# not a clock, decides when loading ends.
GATED_HANDLER = """
import os
import time
from pyovms import Tensor

class OvmsPythonModel:
    def initialize(self, kwargs):
        gate = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate")
        deadline = time.monotonic() + 120
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.05)

    def execute(self, inputs):
        return [Tensor("output", inputs[0])]
"""

ECHO_HANDLER = """
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs):
        return [Tensor("output", inputs[0])]
"""


def graph_folder(root: Path, name: str, handler: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "graph.pbtxt").write_text(ECHO_GRAPH)
    (folder / "echo.py").write_text(textwrap.dedent(handler))
    return folder


def write(root: Path, config: dict) -> Path:
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def servables_config(root: Path) -> Path:
    """add_one (serving), broken (no version folder: never serving), add_two (a pipeline of
    add_one twice) and echo (a graph)."""
    sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "add_one")
    (root / "broken").mkdir()
    graph_folder(root, "echo", ECHO_HANDLER)
    link = {"node_name": "first", "data_item": "once"}
    pipeline = {
        "name": "add_two",
        "inputs": ["input"],
        "nodes": [
            {
                "name": "first",
                "type": "DL model",
                "model_name": "add_one",
                "inputs": [{"input": {"node_name": "request", "data_item": "input"}}],
                "outputs": [{"data_item": "output", "alias": "once"}],
            },
            {
                "name": "second",
                "type": "DL model",
                "model_name": "add_one",
                "inputs": [{"input": link}],
                "outputs": [{"data_item": "output", "alias": "twice"}],
            },
        ],
        "outputs": [{"output": {"node_name": "second", "data_item": "twice"}}],
    }
    models = [
        {"config": {"name": "add_one", "base_path": str(root / "add_one"), "plugin_config": F32}},
        {"config": {"name": "broken", "base_path": str(root / "broken")}},
    ]
    return write(
        root,
        {
            "model_config_list": models,
            "pipeline_config_list": [pipeline],
            "mediapipe_config_list": [{"name": "echo", "base_path": str(root / "echo")}],
        },
    )


def gated_config(root: Path) -> tuple[Path, Path]:
    """A config whose one graph, ``gated``, loads once the returned gate file exists."""
    folder = graph_folder(root, "gated", GATED_HANDLER)
    graph = {"name": "gated", "base_path": str(folder)}
    config = write(root, {"model_config_list": [], "mediapipe_config_list": [graph]})
    return config, folder / "gate"


def wait_live(server: ServerProcess) -> None:
    """Until gRPC answers (ServerLive), whatever the models' state."""
    deadline = time.monotonic() + READY_TIMEOUT
    with grpcclient.InferenceServerClient(server.url) as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                raise RuntimeError(f"ovmsx exited before it was live:\n{server.log()}")
            try:
                if client.is_server_live(client_timeout=2):
                    return
            except InferenceServerException:
                pass
            time.sleep(0.1)
    server.kill()
    raise TimeoutError(f"ovmsx was not live after {READY_TIMEOUT} s:\n{server.log()}")
