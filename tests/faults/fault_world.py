"""What the fault tests serve: slow servables to cancel, Python nodes that misbehave, and the
helpers that read a server's memory and metrics.

- ``slow``: FP32 ``input`` [-1, 512] -> ``output`` (a copy) through a chain of matmuls that takes
  a fraction of a second for ``SLOW_ROWS`` rows (4 MiB); ``light`` is the same with one layer.
- ``slow_pipeline``: a DAG of one ``slow`` node; ``slow_graph``: a graph inferring ``slow``;
  ``sleepy``: a graph whose Python node sleeps before it answers.
- ``node_<fault>``: one Python node each, misbehaving as ``FAULTY`` says; ``increment``: one
  that works.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import serving_graphs_openvino as sgo
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_graphs import graph_text, python_node
from serving_pipelines import model_node, pipeline

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
WIDTH = 512
SLOW_ROWS = 2048  # 4 MiB of FP32
# 48 layers: about 0.15 s for SLOW_ROWS on an AVX-512 Xeon, about 1.5 s on an older EPYC, so a
# 30 ms deadline always falls inside the work.
SLOW_LAYERS = 48
SLEEP_SECONDS = 0.5
X = np.arange(10, dtype=np.float32).reshape(1, 10)

_NODE_HEAD = """
    import threading
    import time
    import numpy as np
    from pyovms import Tensor

    class OvmsPythonModel:
        def initialize(self, kwargs):
            self.output = kwargs["output_names"][0]

        def execute(self, inputs):
"""

# fault -> the body of ``execute``
FAULTY = {
    "raises": 'raise ValueError("the node gave up")',
    "returns_none": "return None",
    "returns_dict": "return {self.output: inputs[0]}",
    "returns_tuple": "return (inputs[0],)",
    "returns_ints": "return [1, 2]",
    "returns_array": "return [np.array(inputs[0]) + 1]",
    "returns_unknown_name": 'return [Tensor("not_an_output", np.array(inputs[0]))]',
    "blocks": "threading.Event().wait()",
}
# fault -> what the error message says after the node's name
FAULT_MESSAGES = {
    "raises": "Error occurred during graph execution (ValueError: the node gave up)",
    "returns_none": "Expected: list or generator. Received: NoneType",
    "returns_dict": "Expected: list or generator. Received: dict",
    "returns_tuple": "Expected: list or generator. Received: tuple",
    "returns_ints": "Expected: Tensor. Received: int",
    "returns_array": "Expected: Tensor. Received: ndarray",
    "returns_unknown_name": "Tensor name: not_an_output is not a valid node output",
}


def working(sleep_seconds: float = SLEEP_SECONDS) -> dict[str, str]:
    """Handlers that answer: ``increment`` at once, ``sleepy`` after ``sleep_seconds``."""
    return {
        "increment": "return [Tensor(self.output, np.array(inputs[0]) + 1)]",
        "sleepy": f"time.sleep({sleep_seconds})\n"
        + " " * 8
        + "return [Tensor(self.output, np.array(inputs[0]) + 1)]",
    }


def handler(body: str) -> str:
    return textwrap.dedent(_NODE_HEAD) + "        " + body + "\n"


def python_graph(root: Path, name: str, body: str) -> dict:
    """A graph ``name`` of one Python node ``<name>_node``: input -> output."""
    folder = root / "graphs" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.pbtxt").write_text(
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [python_node(f"{name}_node", "handler.py", ["INPUT:input"], ["OUTPUT:output"])],
        )
    )
    (folder / "handler.py").write_text(handler(body))
    return {"name": name, "base_path": str(folder)}


def slow_graph(root: Path) -> dict:
    folder = root / "graphs" / "slow_graph"
    folder.mkdir(parents=True, exist_ok=True)
    text = sgo.model_graph("slow", None, in_map={"B": "input"}, out_map={"A": "output"})
    (folder / "graph.pbtxt").write_text(text)
    return {"name": "slow_graph", "base_path": str(folder)}


def build(root: Path, sleep_seconds: float = SLEEP_SECONDS) -> Path:
    """Every servable above, and ``root/config.json`` serving them; ``sleepy`` sleeps
    ``sleep_seconds``."""
    sm.save(sm.slow(WIDTH, SLOW_LAYERS), root / "models" / "slow")
    sm.save(sm.slow(WIDTH, 1), root / "models" / "light")
    models = [
        {"name": name, "base_path": str(root / "models" / name), "plugin_config": F32}
        for name in ("slow", "light")
    ]
    slow_pipeline = pipeline(
        "slow_pipeline",
        ["x"],
        [model_node("run", "slow", {"input": ("request", "x")}, {"output": "copy"})],
        {"y": ("run", "copy")},
    )
    graphs = [slow_graph(root)]
    graphs += [python_graph(root, name, body) for name, body in working(sleep_seconds).items()]
    graphs += [python_graph(root, f"node_{fault}", body) for fault, body in FAULTY.items()]
    config = root / "config.json"
    config.write_text(
        json.dumps(
            {
                "model_config_list": [{"config": m} for m in models],
                "pipeline_config_list": [slow_pipeline],
                "mediapipe_config_list": graphs,
            },
            indent=1,
        )
    )
    return config


def rows(count: int = SLOW_ROWS, value: float = 1.0) -> np.ndarray:
    return np.full((count, WIDTH), value, np.float32)


def tensor(name: str, data: np.ndarray) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, list(data.shape), "FP32")
    given.set_data_from_numpy(data)
    return given


# servable -> (input name, output name) for a request of ``rows()``
SLOW_SERVABLES = {
    "slow": ("input", "output"),
    "slow_pipeline": ("x", "y"),
    "slow_graph": ("in", "out"),
    "sleepy": ("input", "output"),
}

INPUT_NAMES = {name: given for name, (given, _) in SLOW_SERVABLES.items()} | {"light": "input"}


def metric(text: str, family: str, **labels: str) -> float:
    """The sum of ``family``'s samples whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(family + "{") and not line.startswith(family + " "):
            continue
        head, _, value = line.rpartition(" ")
        if all(f'{key}="{wanted}"' in head for key, wanted in labels.items()):
            total += float(value)
    return total
