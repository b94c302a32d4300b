"""The scheduler on its own: stream handlers, bounds, back edges, timestamps, failures.

Calculators here are small Python classes; the Python-node calculator is tested through the
server (tests/serving/test_graph_*.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
from ovmsx.graph.graph_config import parse_graph
from ovmsx.graph.graph_plan import build_plan
from ovmsx.graph.graph_run import GraphRun
from ovmsx.graph.packet import Packet
from ovmsx.status import StatusCode, StatusError


class Recorder(Calculator):
    """Emits, on every output, the sorted tags it received and the timestamp."""

    def __init__(self, node: RecorderNode) -> None:
        self.node = node

    def process(self, context: CalculatorContext) -> None:
        self.node.calls.append((context.timestamp, sorted(context.inputs)))
        for ref in self.node.node.outputs:
            if ref.tag != "SKIP":
                context.emit(ref.tag_index, sorted(context.inputs))


class RecorderNode(CalculatorNode):
    def __init__(self, node, load) -> None:
        super().__init__(node, load)
        self.calls: list[tuple[int, list[str]]] = []

    def create(self) -> Calculator:
        return Recorder(self)


class Countdown(Calculator):
    """A generator through a back edge: on input n, emits n, n-1, ..., 1 one per call."""

    def __init__(self) -> None:
        self.left = 0

    def process(self, context: CalculatorContext) -> None:
        if "IN:0" in context.inputs:
            self.left = context.inputs["IN:0"]
        if self.left:
            context.emit("OUT:0", self.left)
            context.emit("LOOPBACK:0", True, context.timestamp + 1)
            self.left -= 1


class CountdownNode(CalculatorNode):
    def create(self) -> Calculator:
        return Countdown()


class Failing(Calculator):
    def process(self, context: CalculatorContext) -> None:
        raise NodeFailure("refused", "INVALID_ARGUMENT")


class FailingNode(CalculatorNode):
    def create(self) -> Calculator:
        return Failing()


KINDS = {"Recorder": RecorderNode, "Countdown": CountdownNode, "Failing": FailingNode}


def start(text: str) -> tuple[GraphRun, list[tuple[str, Packet]], list[CalculatorNode]]:
    config = parse_graph(text, "test.pbtxt")
    nodes = [KINDS[n.calculator](n, GraphLoad(Path("."))) for n in config.nodes]
    outputs: list[tuple[str, Packet]] = []
    run = GraphRun(build_plan(config, nodes), {}, lambda s, p: outputs.append((s, p)))
    return run, outputs, nodes


TWO_INPUTS = """
input_stream: "a"
input_stream: "b"
output_stream: "out"
node { calculator: "Recorder" input_stream: "A:a" input_stream: "B:b" output_stream: "OUT:out" }
"""


IMMEDIATE = TWO_INPUTS.replace(
    'output_stream: "OUT:out" }',
    'output_stream: "OUT:out" '
    'input_stream_handler { input_stream_handler: "ImmediateInputStreamHandler" } }',
)


def test_default_handler_waits_for_every_input_at_one_timestamp() -> None:
    run, outputs, _ = start(TWO_INPUTS)
    run.add_packet("a", 1, 10)
    run.drain()
    assert outputs == []
    run.add_packet("b", 2, 10)
    run.drain()
    assert outputs == [("out", Packet(["A:0", "B:0"], 10))]


def test_default_handler_moves_on_when_a_bound_passes() -> None:
    # "b" skips timestamp 10: once its next packet is at 20, "a"@10 runs alone.
    run, outputs, _ = start(TWO_INPUTS)
    run.add_packet("a", 1, 10)
    run.add_packet("b", 2, 20)
    run.drain()
    assert outputs == [("out", Packet(["A:0"], 10))]
    run.add_packet("a", 3, 20)
    run.drain()
    assert outputs[-1] == ("out", Packet(["A:0", "B:0"], 20))


def test_closing_inputs_flushes_partial_sets_and_closes_nodes() -> None:
    run, outputs, _ = start(TWO_INPUTS)
    run.add_packet("a", 1, 10)
    run.close_inputs()
    run.drain()
    assert outputs == [("out", Packet(["A:0"], 10))]
    assert run.finished


def test_missing_output_does_not_stall_downstream() -> None:
    # The first node emits nothing on "skipped"; the second still runs on "kept" alone.
    text = """
    input_stream: "in"
    output_stream: "out"
    node { calculator: "Recorder" input_stream: "IN:in"
           output_stream: "KEPT:kept" output_stream: "SKIP:skipped" }
    node { calculator: "Recorder" input_stream: "A:kept" input_stream: "B:skipped"
           output_stream: "OUT:out" }
    """
    run, outputs, _ = start(text)
    run.add_packet("in", 0, 5)
    run.drain()
    assert outputs == [("out", Packet(["A:0"], 5))]


def test_immediate_handler_runs_each_packet_alone() -> None:
    run, outputs, _ = start(IMMEDIATE)
    run.add_packet("a", 1, 10)
    run.drain()
    run.add_packet("b", 2, 11)
    run.drain()
    assert outputs == [("out", Packet(["A:0"], 10)), ("out", Packet(["B:0"], 11))]


GENERATOR = """
input_stream: "in"
output_stream: "out"
node {
  calculator: "Countdown"
  input_stream: "IN:in"
  input_stream: "LOOPBACK:loop"
  input_stream_info { tag_index: "LOOPBACK:0" back_edge: true }
  input_stream_handler {
    input_stream_handler: "SyncSetInputStreamHandler"
    options { [mediapipe.SyncSetInputStreamHandlerOptions.ext] {
      sync_set { tag_index: "LOOPBACK:0" } } }
  }
  output_stream: "OUT:out"
  output_stream: "LOOPBACK:loop"
}
"""


def test_back_edge_drives_a_generator_with_increasing_timestamps() -> None:
    run, outputs, _ = start(GENERATOR)
    run.add_packet("in", 3, 100)
    run.drain()
    assert outputs == [("out", Packet(3, 100)), ("out", Packet(2, 101)), ("out", Packet(1, 102))]
    run.close_inputs()
    run.drain()
    assert run.finished


def test_generation_continues_after_the_inputs_close() -> None:
    run, outputs, _ = start(GENERATOR)
    run.add_packet("in", 2, 0)
    run.close_inputs()
    assert run.drain(budget=1)  # one call made, more to do
    run.drain()
    assert [p.value for _, p in outputs] == [2, 1]
    assert run.finished


def test_input_timestamps_must_increase() -> None:
    run, _, _ = start(TWO_INPUTS)
    run.add_packet("a", 1, 10)
    with pytest.raises(StatusError) as caught:
        run.add_packet("a", 1, 10)
    assert caught.value.code == StatusCode.MEDIAPIPE_GRAPH_ADD_PACKET_INPUT_STREAM
    assert "input stream a" in caught.value.message


def test_a_failing_node_stops_the_instance_with_its_reason() -> None:
    text = """
    input_stream: "in"
    output_stream: "out"
    node { name: "picky" calculator: "Failing" input_stream: "IN:in" output_stream: "OUT:out" }
    """
    run, outputs, _ = start(text)
    run.add_packet("in", 1, 1)
    run.drain()
    assert outputs == []
    assert run.error is not None
    assert run.error.code == StatusCode.MEDIAPIPE_EXECUTION_ERROR
    assert 'INVALID_ARGUMENT: Calculator::Process() for node "picky" failed: refused' in str(
        run.error
    )
    with pytest.raises(StatusError):
        run.add_packet("in", 2, 2)


def test_nodes_run_upstream_first_and_never_twice_at_one_timestamp() -> None:
    text = """
    input_stream: "in"
    output_stream: "out"
    node { name: "second" calculator: "Recorder"
           input_stream: "IN:middle" output_stream: "OUT:out" }
    node { name: "first" calculator: "Recorder"
           input_stream: "IN:in" output_stream: "OUT:middle" }
    """
    run, outputs, nodes = start(text)
    for stamp in (1, 2, 3):
        run.add_packet("in", stamp, stamp)
    run.drain()
    assert [p.timestamp for _, p in outputs] == [1, 2, 3]
    for node in nodes:
        assert [t for t, _ in node.calls] == [1, 2, 3]


def test_immediate_handler_delivers_one_timestamp_together() -> None:
    run, outputs, _ = start(IMMEDIATE)
    run.add_packet("a", 1, 10)
    run.add_packet("b", 2, 10)
    run.drain()
    assert outputs == [("out", Packet(["A:0", "B:0"], 10))]
    assert run.error is None
