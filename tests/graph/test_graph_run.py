"""The scheduler on its own: stream handlers, bounds, back edges, timestamps, failures.

Calculators here are small Python classes; the Python-node calculator is tested through the
server (tests/serving/test_graph_*.py).
"""

from __future__ import annotations

import asyncio
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


class Publisher(Calculator):
    """Publishes "SIDE" in open; forwards its input plus the side packet it reads, if any."""

    def open(self, context: CalculatorContext) -> None:
        context.set_side_packet("SIDE", "made in open")

    def process(self, context: CalculatorContext) -> None:
        context.output("OUT", (context.input("IN"), context.side_packet("SIDE")))


class PublisherNode(CalculatorNode):
    def create(self) -> Calculator:
        return Publisher()


class Reader(Calculator):
    def process(self, context: CalculatorContext) -> None:
        context.output("OUT", (context.input("IN"), context.side_packet("SIDE")))


class ReaderNode(CalculatorNode):
    optional_side_packets = frozenset({"MAYBE"})

    def create(self) -> Calculator:
        return Reader()


class Halver(Calculator):
    """Answers synchronously on a worker, or awaits on the loop (like inference nodes)."""

    def process(self, context: CalculatorContext) -> None:
        context.output("OUT", ("sync", context.input("IN") / 2))

    async def process_async(self, context: CalculatorContext) -> None:
        await asyncio.sleep(0)
        context.output("OUT", ("async", context.input("IN") / 2))


class HalverNode(CalculatorNode):
    def create(self) -> Calculator:
        return Halver()


KINDS = {
    "Recorder": RecorderNode,
    "Countdown": CountdownNode,
    "Failing": FailingNode,
    "Publisher": PublisherNode,
    "Reader": ReaderNode,
    "Halver": HalverNode,
}


def start(
    text: str, side_packets: dict | None = None
) -> tuple[GraphRun, list[tuple[str, Packet]], list[CalculatorNode]]:
    config = parse_graph(text, "test.pbtxt")
    nodes = [KINDS[n.calculator](n, GraphLoad(Path("."))) for n in config.nodes]
    outputs: list[tuple[str, Packet]] = []
    run = GraphRun(
        build_plan(config, nodes), side_packets or {}, lambda s, p: outputs.append((s, p))
    )
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


SIDE_PACKETS = """
input_stream: "in"
output_stream: "out"
output_stream: "mid"
node { calculator: "Reader" input_stream: "IN:mid" output_stream: "OUT:out"
       input_side_packet: "SIDE:shared" }
node { calculator: "Publisher" input_stream: "IN:in" output_stream: "OUT:mid"
       output_side_packet: "SIDE:shared" }
"""


def test_a_side_packet_made_in_open_reaches_the_node_reading_it() -> None:
    # The reader comes first in the file: it must still open after the publisher.
    run, outputs, _ = start(SIDE_PACKETS)
    run.add_packet("in", 7, 1)
    run.close_inputs()
    run.drain()
    assert run.error is None
    assert dict((s, p.value) for s, p in outputs) == {
        "mid": (7, None),
        "out": ((7, None), "made in open"),
    }


REQUEST_SIDE_PACKET = """
input_stream: "in"
output_stream: "out"
node { calculator: "Reader" input_stream: "IN:in" output_stream: "OUT:out"
       input_side_packet: "SIDE:label" }
"""


def test_request_side_packets_reach_nodes_by_name() -> None:
    run, outputs, _ = start(REQUEST_SIDE_PACKET, {"label": "from the request"})
    run.add_packet("in", 1, 1)
    run.drain()
    assert outputs == [("out", Packet((1, "from the request"), 1))]


def test_a_missing_side_packet_stops_the_instance_before_it_starts() -> None:
    run, _, _ = start(REQUEST_SIDE_PACKET)
    assert run.error is not None
    assert run.error.code is StatusCode.MEDIAPIPE_GRAPH_START_ERROR
    assert 'needs input side packet "label" (SIDE:0)' in str(run.error)


def test_an_optional_side_packet_may_be_missing() -> None:
    run, outputs, _ = start(REQUEST_SIDE_PACKET.replace('"SIDE:label"', '"MAYBE:label"'))
    run.add_packet("in", 1, 1)
    run.drain()
    assert run.error is None
    assert outputs == [("out", Packet((1, None), 1))]


HALVING = """
input_stream: "in"
output_stream: "out"
node { calculator: "Halver" input_stream: "IN:in" output_stream: "OUT:out" }
"""


@pytest.mark.parametrize(("on_loop", "mode"), [(True, "async"), (False, "sync")])
def test_awaitable_calculators_are_awaited_on_the_loop_and_called_on_workers(
    on_loop: bool, mode: str
) -> None:
    run, outputs, _ = start(HALVING)
    run.add_packet("in", 8.0, 1)
    run.close_inputs()
    if on_loop:
        asyncio.run(run.drain_async())
    else:
        run.drain()
    assert run.finished
    assert outputs == [("out", Packet((mode, 4.0), 1))]


def test_failure_in_an_awaited_calculator_stops_the_instance() -> None:
    run, _, _ = start(HALVING)
    run.add_packet("in", "not a number", 1)
    asyncio.run(run.drain_async())
    assert run.error is not None
    assert run.error.code is StatusCode.MEDIAPIPE_EXECUTION_ERROR
    assert "TypeError" in str(run.error)
