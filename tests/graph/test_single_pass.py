"""The single-pass fast path answers a unary request exactly as the general scheduler does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode, GraphLoad
from ovmsx.graph.graph_config import parse_graph
from ovmsx.graph.graph_plan import build_plan
from ovmsx.graph.graph_run import GraphRun
from ovmsx.graph.single_pass import SinglePass
from ovmsx.servables.graph_execution import run_unary
from ovmsx.status import StatusCode, StatusError


class Joiner(Calculator):
    """Emits, on every output but SKIP, the sorted (tag, value) pairs it was given."""

    def __init__(self, node: NodeOf) -> None:
        self._node = node

    def process(self, context: CalculatorContext) -> None:
        seen = sorted((tag, str(value)) for tag, value in context.inputs.items())
        for ref in self._node.node.outputs:
            if ref.tag != "SKIP":
                context.emit(ref.tag_index, seen)


class NodeOf(CalculatorNode):
    single_timestamp = True

    def create(self) -> Calculator:
        return Joiner(self)


class Failing(Calculator):
    def process(self, context: CalculatorContext) -> None:
        raise ValueError("refused on purpose")


class FailingNode(CalculatorNode):
    single_timestamp = True

    def create(self) -> Calculator:
        return Failing()


class TwoTimestamps(Calculator):
    def process(self, context: CalculatorContext) -> None:
        context.emit("OUT:0", 1, context.timestamp + 1)


class TwoTimestampsNode(CalculatorNode):  # not single_timestamp: the scheduler's job
    def create(self) -> Calculator:
        return TwoTimestamps()


KINDS = {"Join": NodeOf, "Failing": FailingNode, "Later": TwoTimestampsNode}

# A diamond with a skipped branch, a node fed by nothing that arrives, and an input that is
# also an output.
DIAMOND = """
input_stream: "a"
input_stream: "b"
output_stream: "a"
output_stream: "left"
output_stream: "joined"
output_stream: "late"
node { calculator: "Join" input_stream: "X:a" output_stream: "OUT:left" output_stream: "SKIP:gone" }
node { calculator: "Join" input_stream: "X:a" input_stream: "Y:b" output_stream: "OUT:right" }
node { calculator: "Join" input_stream: "L:left" input_stream: "R:right"
       output_stream: "OUT:joined" }
node { calculator: "Join" input_stream: "G:gone" output_stream: "OUT:late" }
"""


def _plan(text: str):
    config = parse_graph(text, "test.pbtxt")
    nodes = [KINDS[n.calculator](n, GraphLoad(Path("."))) for n in config.nodes]
    return build_plan(config, nodes)


def _answers(first: dict) -> dict:
    return {stream: (packet.value, packet.timestamp) for stream, packet in first.items()}


def _scheduled(plan, inputs: list, timestamp: int) -> dict:
    """What the general scheduler gives: the first packet of every output."""
    first: dict = {}
    run = GraphRun(plan, {}, lambda stream, packet: first.setdefault(stream, packet))
    for stream, value in inputs:
        run.add_packet(stream, value, timestamp)
    run.close_inputs()
    run.drain()
    assert run.error is None
    assert run.finished
    return first


def _one_node(calculator: str) -> str:
    return (
        'input_stream: "a"\noutput_stream: "o"\n'
        f'node {{ calculator: "{calculator}" input_stream: "X:a" output_stream: "OUT:o" }}\n'
    )


def test_the_diamond_matches_the_scheduler() -> None:
    plan = _plan(DIAMOND)
    assert SinglePass.fits(plan)
    inputs = [("a", 1), ("b", 2)]
    one_pass = SinglePass(plan).run({}, inputs, 7)
    assert _answers(one_pass) == _answers(_scheduled(plan, inputs, 7))
    assert "late" not in one_pass  # fed only by a stream nobody wrote: the node never ran
    expected = {
        "a": (1, 7),
        "left": ([("X:0", "1")], 7),
        "joined": ([("L:0", "[('X:0', '1')]"), ("R:0", "[('X:0', '1'), ('Y:0', '2')]")], 7),
    }
    assert _answers(one_pass) == expected
    assert _answers(asyncio.run(SinglePass(plan).run_async({}, inputs, 7))) == expected


def test_failures_read_as_the_schedulers() -> None:
    plan = _plan(_one_node("Failing"))
    with pytest.raises(StatusError) as fast:
        SinglePass(plan).run({}, [("a", 1)], 1)
    with pytest.raises(StatusError) as general:
        run_unary(plan, {}, [("a", 1)], 1)
    assert fast.value.code is StatusCode.MEDIAPIPE_EXECUTION_ERROR
    assert str(fast.value) == str(general.value)
    assert "ValueError: refused on purpose" in str(fast.value)


def test_graphs_it_cannot_run_are_left_to_the_scheduler() -> None:
    assert not SinglePass.fits(_plan(_one_node("Later")))
    sync_set = DIAMOND.replace(
        'output_stream: "OUT:joined" }',
        'output_stream: "OUT:joined" input_stream_handler { input_stream_handler: '
        '"SyncSetInputStreamHandler" } }',
    )
    assert not SinglePass.fits(_plan(sync_set))


def test_a_stream_given_twice_is_refused() -> None:
    with pytest.raises(StatusError) as caught:
        SinglePass(_plan(DIAMOND)).run({}, [("a", 1), ("a", 2), ("b", 3)], 1)
    assert caught.value.code is StatusCode.MEDIAPIPE_GRAPH_ADD_PACKET_INPUT_STREAM
