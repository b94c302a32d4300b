"""The graphs the served core-calculator tests use, with their Python handlers.

Python nodes (``PythonExecutorCalculator`` with ``from pyovms import Tensor`` handlers) make
and consume the tensors around the core calculators; ``ToTensorCalculator`` (a Python
calculator) turns the bools and ints some core calculators send into tensors a response can
carry. ``slow.py`` holds each frame until the test creates ``release/<value>`` in the graph's
folder, and marks ``started/<value>`` when it begins: the tests decide when a frame finishes.
"""

from __future__ import annotations

import json
from pathlib import Path

PY_OPTIONS = "[type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]"

TO_TENSOR = '''
"""Sends on OUT the packet on IN as a one-element Tensor (a bool or an int)."""

import numpy as np

from ovmsx import Tensor
from ovmsx.calculators import PythonCalculator, register_calculator


@register_calculator(name="ToTensorCalculator")
class ToTensor(PythonCalculator):
    INPUTS = ("IN",)
    OUTPUTS = ("OUT",)

    def process(self, context):
        context.output("OUT", Tensor("value", np.array([context.input("IN")])))
'''

DOUBLE = """
import numpy as np
from pyovms import Tensor


class OvmsPythonModel:
    def initialize(self, kwargs):
        self.output = kwargs["output_names"][0]

    def execute(self, inputs):
        return [Tensor(self.output, np.asarray(inputs[0]) * 2)]
"""

SLOW = """
import time
from pathlib import Path

import numpy as np
from pyovms import Tensor

GIVE_UP_S = 120  # only so that a broken test cannot hang the run; nothing is timed


class OvmsPythonModel:
    def initialize(self, kwargs):
        self.output = kwargs["output_names"][0]
        self.folder = Path(kwargs["base_path"])

    def execute(self, inputs):
        value = int(np.asarray(inputs[0]).reshape(-1)[0])
        (self.folder / "started").mkdir(exist_ok=True)
        (self.folder / "started" / str(value)).touch()
        release = self.folder / "release" / str(value)
        deadline = time.monotonic() + GIVE_UP_S
        while not release.exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"frame {value} was never released")
            time.sleep(0.005)
        return [Tensor(self.output, np.asarray(inputs[0]))]
"""


def python_node(name: str, handler: str, inputs: str, outputs: str) -> str:
    return f"""
node {{ name: "{name}" calculator: "PythonExecutorCalculator"
       input_side_packet: "PYTHON_NODE_RESOURCES:py"
       input_stream: "{inputs}" output_stream: "{outputs}"
       node_options: {{ {PY_OPTIONS}: {{ handler_path: "{handler}" }} }} }}
"""


def flow_limited(options: str, with_drops: bool = True) -> str:
    """A flow limiter before a slow Python node; with ``with_drops``, a gate sends the
    frames the limiter dropped (ALLOW false) on ``dropped``."""
    dropped = """
output_stream: "dropped"
node { calculator: "GateCalculator" input_stream: "in" input_stream: "DISALLOW:allowed"
       output_stream: "dropped" }
"""
    return f"""
input_stream: "in"
output_stream: "done"
node {{
  calculator: "FlowLimiterCalculator"
  input_stream: "in"
  input_stream: "FINISHED:done"
  input_stream_info {{ tag_index: "FINISHED" back_edge: true }}
  output_stream: "limited"
  output_stream: "ALLOW:allowed"
  options {{ [mediapipe.FlowLimiterCalculatorOptions.ext] {{ {options} }} }}
}}
{python_node("slow", "slow.py", "OVMS_PY_TENSOR:limited", "OVMS_PY_TENSOR:done")}
{dropped if with_drops else ""}
"""


GRAPHS: dict[str, str] = {
    "pass_through": """
input_stream: "in"
output_stream: "out"
node { calculator: "PassThroughCalculator" input_stream: "in" output_stream: "out" }
""",
    "gate": """
input_stream: "data"
input_stream: "allow"
output_stream: "out"
node { calculator: "GateCalculator" input_stream: "data" input_stream: "ALLOW:allow"
       output_stream: "out" }
""",
    "gate_changes": """
input_stream: "data"
input_stream: "allow"
output_stream: "out"
output_stream: "changed"
node { calculator: "GateCalculator" input_stream: "data" input_stream: "ALLOW:allow"
       output_stream: "out" output_stream: "STATE_CHANGE:change" }
node { calculator: "ToTensorCalculator" input_stream: "IN:change" output_stream: "OUT:changed" }
""",
    "cloner": """
input_stream: "value"
input_stream: "tick"
output_stream: "cloned"
node { calculator: "PacketClonerCalculator" input_stream: "value" input_stream: "TICK:tick"
       output_stream: "cloned" }
""",
    "side_packet_at_tick": """
input_stream: "tick"
output_stream: "out"
node { calculator: "SidePacketToStreamCalculator" input_stream: "TICK:tick"
       input_side_packet: "label" output_stream: "AT_TICK:label_stream" }
node { calculator: "ToTensorCalculator" input_stream: "IN:label_stream" output_stream: "OUT:out" }
""",
    "side_packet_at_zero": """
input_stream: "tick"
output_stream: "out"
node { calculator: "SidePacketToStreamCalculator" input_side_packet: "label"
       output_stream: "AT_ZERO:label_stream" }
node { calculator: "ToTensorCalculator" input_stream: "IN:label_stream" output_stream: "OUT:out" }
""",
    "previous": f"""
input_stream: "frame"
output_stream: "prev"
node {{ calculator: "PreviousLoopbackCalculator" input_stream: "MAIN:frame"
       input_stream: "LOOP:doubled" input_stream_info {{ tag_index: "LOOP" back_edge: true }}
       output_stream: "PREV_LOOP:prev" }}
{python_node("double", "double.py", "OVMS_PY_TENSOR:frame", "OVMS_PY_TENSOR:doubled")}
""",
    "vectors": f"""
input_stream: "a"
input_stream: "b"
output_stream: "first"
output_stream: "second"
node {{ calculator: "ConcatenateTensorVectorCalculator" input_stream: "a" input_stream: "b"
       output_stream: "both" }}
node {{ calculator: "BeginLoopTensorCalculator" input_stream: "ITERABLE:both"
       output_stream: "ITEM:item" output_stream: "BATCH_END:batch_end" }}
{python_node("double", "double.py", "OVMS_PY_TENSOR:item", "OVMS_PY_TENSOR:doubled")}
node {{ calculator: "EndLoopTensorCalculator" input_stream: "ITEM:doubled"
       input_stream: "BATCH_END:batch_end" output_stream: "ITERABLE:all" }}
node {{ calculator: "SplitTensorVectorCalculator" input_stream: "all"
       output_stream: "first" output_stream: "second"
       options {{ [mediapipe.SplitVectorCalculatorOptions.ext] {{
         ranges {{ begin: 0 end: 1 }} ranges {{ begin: 1 end: 2 }} element_only: true }} }} }}
""",
    # One frame in flight, two more may wait: a burst keeps the newest two.
    "flow_queue": flow_limited("max_in_flight: 1 max_in_queue: 2"),
    # MediaPipe's defaults: one in flight, none waiting.
    "flow_drop": flow_limited(""),
    "flow_unary": flow_limited("max_in_flight: 1", with_drops=False),
}

# Graphs a core calculator's contract refuses: not served, with the reason.
BROKEN_GRAPHS: dict[str, str] = {
    "split_without_outputs": """
input_stream: "v"
output_stream: "o"
node { name: "split" calculator: "SplitTensorVectorCalculator" input_stream: "v"
       output_stream: "o"
       options { [mediapipe.SplitVectorCalculatorOptions.ext] {
         ranges { begin: 0 end: 1 } ranges { begin: 1 end: 2 } } } }
""",
    "limiter_without_finished": """
input_stream: "in"
output_stream: "out"
node { name: "limiter" calculator: "FlowLimiterCalculator" input_stream: "in"
       output_stream: "out" }
""",
}

HANDLERS = {"double.py": DOUBLE, "slow.py": SLOW}


def write_graphs(root: Path) -> Path:
    """``root/<graph>/graph.pbtxt`` (and its handlers) for every graph, ``root/config.json``."""
    (root / "to_tensor.py").write_text(TO_TENSOR)
    entries = []
    for name, text in {**GRAPHS, **BROKEN_GRAPHS}.items():
        folder = root / name
        folder.mkdir()
        (folder / "graph.pbtxt").write_text(text)
        for handler, source in HANDLERS.items():
            if f'"{handler}"' in text:
                (folder / handler).write_text(source)
        entry: dict = {"name": name}
        if "ToTensorCalculator" in text:
            entry["calculator_modules"] = ["../to_tensor.py"]
        entries.append(entry)
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": entries}))
    return config
