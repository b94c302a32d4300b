"""A graph of one Python node runs without the calculator protocol (OneNodePass), with the
same outcome as the general one-pass path for every answer a handler can give."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from ovmsx import _core
from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.graph.single_pass import OneNodePass, SinglePass
from ovmsx.servables.graph import Graph
from ovmsx.servables.graph_requests import side_packets
from ovmsx.status import StatusError

HANDLER = """
import numpy as np
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs, graph_state):
        value = int(np.asarray(inputs[0])[0])
        graph_state["calls"] = graph_state.get("calls", 0) + 1
        twice = Tensor("twice", np.array([2 * value, graph_state["calls"]], np.int64))
        echo = Tensor("echo", np.asarray(inputs[0]))
        answers = {
            1: lambda: [twice, echo],
            2: lambda: [echo, twice, twice],
            3: lambda: [twice],
            4: lambda: [twice, 7],
            5: lambda: [twice, Tensor("other", np.zeros(1))],
            6: lambda: None,
            7: lambda: (twice, echo),
            8: lambda: iter([[twice, echo]]),
        }
        if value not in answers:
            raise KeyError(value)
        return answers[value]()
"""


def _graph(root: Path, text: str) -> Graph:
    folder = root / "g"
    folder.mkdir(parents=True)
    (folder / "handler.py").write_text(textwrap.dedent(HANDLER))
    (folder / "graph.pbtxt").write_text(textwrap.dedent(text))
    config = MediapipeConfig.model_validate({"name": "g"}, context={"config_dir": root})
    graph = Graph("g", config)
    graph.load()
    return graph


def _node(name: str, inputs: str, outputs: str) -> str:
    return f"""
    node {{
      name: "{name}"
      calculator: "PythonExecutorCalculator"
      input_side_packet: "PYTHON_NODE_RESOURCES:py"
      {inputs}
      {outputs}
      node_options: {{
        [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: {{
          handler_path: "handler.py"
        }}
      }}
    }}
    """


ONE_NODE = (
    'input_stream: "OVMS_PY_TENSOR:value"\n'
    'output_stream: "OVMS_PY_TENSOR_A:twice"\noutput_stream: "OVMS_PY_TENSOR_B:echo"\n'
    + _node("n", 'input_stream: "IN:value"', 'output_stream: "A:twice" output_stream: "B:echo"')
)


def _outcome(run, sides: dict, value: int) -> object:
    tensor = _core.Tensor("value", np.array([value], np.int64))
    try:
        first = run(sides, [("value", tensor)], 42)
    except StatusError as error:
        return error.code, str(error)
    return {s: (np.asarray(p.value).tolist(), p.timestamp) for s, p in first.items()}


@pytest.mark.parametrize("value", range(10))
def test_every_answer_matches_the_one_pass_path(tmp_path: Path, value: int) -> None:
    graph = _graph(tmp_path, ONE_NODE)
    assert OneNodePass.fits(graph.plan)
    sides = side_packets({})
    fast = _outcome(OneNodePass(graph.plan).run, sides, value)
    general = _outcome(SinglePass(graph.plan).run, sides, value)
    assert fast == general
    if value == 1:  # each run has a graph state of its own
        assert fast == {"twice": ([2, 1], 42), "echo": ([1], 42)}
    elif value == 3:  # an output missing: the runner refuses it (graph_execution._complete)
        assert fast == {"twice": ([6, 1], 42)}
    else:
        assert isinstance(fast, tuple), fast  # every other answer is wrong in its own way


def test_a_missing_side_packet_is_refused_alike(tmp_path: Path) -> None:
    graph = _graph(tmp_path, ONE_NODE)
    fast = _outcome(OneNodePass(graph.plan).run, {}, 1)
    assert fast == _outcome(SinglePass(graph.plan).run, {}, 1)
    assert "needs input side packet" in fast[1]


def test_graphs_of_more_nodes_or_a_loopback_take_the_general_paths(tmp_path: Path) -> None:
    two = (
        'input_stream: "OVMS_PY_TENSOR:value"\noutput_stream: "OVMS_PY_TENSOR:echo2"\n'
        + _node("a", 'input_stream: "IN:value"', 'output_stream: "B:echo"')
        + _node("b", 'input_stream: "IN:echo"', 'output_stream: "B:echo2"')
    )
    assert not OneNodePass.fits(_graph(tmp_path / "two", two).plan)
    loop = 'input_stream: "OVMS_PY_TENSOR:value"\noutput_stream: "OVMS_PY_TENSOR:echo"\n' + _node(
        "l",
        'input_stream: "IN:value" input_stream: "LOOPBACK:loop" '
        'input_stream_info: { tag_index: "LOOPBACK:0" back_edge: true }',
        'output_stream: "B:echo" output_stream: "LOOPBACK:loop"',
    )
    assert not OneNodePass.fits(_graph(tmp_path / "loop", loop).plan)
