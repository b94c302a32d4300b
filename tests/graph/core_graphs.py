"""Running graphs of ovmsx's core calculators in process, for tests/graph/test_core_*.py.

Graphs load as the server loads them (parse, validate against the registry, build each node
from its registered factory); ``Slow`` stands for user code that is slow: its process calls
go to ``offload`` when the run has one, and the test decides when each comes back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ovmsx.call_timer import CallTimer
from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode, GraphLoad
from ovmsx.graph.calculator_registry import known_names, lookup
from ovmsx.graph.graph_config import parse_graph
from ovmsx.graph.graph_plan import build_plan
from ovmsx.graph.graph_run import GraphRun
from ovmsx.graph.graph_validation import validate_graph
from ovmsx.graph.packet import Packet
from ovmsx.servables.graph_execution import UnaryRunner, run_unary
from ovmsx.status import StatusError


class Echo(Calculator):
    def process(self, context: CalculatorContext) -> None:
        for tag_index, value in context.inputs.items():
            context.emit(tag_index.replace("IN", "OUT"), value)


class SlowNode(CalculatorNode):
    """Echoes IN to OUT; user code as the scheduler sees it (timed, not yet measured quick)."""

    def __init__(self, node, load) -> None:
        super().__init__(node, load)
        self.timer = CallTimer(1e-4, "slow")

    def create(self) -> Calculator:
        return Echo()


class BoundsUnknownOutput(Calculator):
    def process(self, context: CalculatorContext) -> None:
        context.set_bound("NOPE:0", context.timestamp + 1)


class BadBoundNode(CalculatorNode):
    """Moves the bound of an output it does not have (a calculator bug)."""

    own_bounds = True

    def create(self) -> Calculator:
        return BoundsUnknownOutput()


EXTRA = {"Slow": SlowNode, "BadBound": BadBoundNode}


def nodes_of(text: str):
    config = parse_graph(text, "test.pbtxt")
    known = set(known_names()) | set(EXTRA)
    validate_graph(config, known, "test.pbtxt")
    load = GraphLoad(Path("."), config)
    nodes = [(EXTRA.get(n.calculator) or lookup(n.calculator))(n, load) for n in config.nodes]
    return config, nodes


def plan_of(text: str):
    config, nodes = nodes_of(text)
    return build_plan(config, nodes)


def load_error(text: str) -> StatusError:
    with pytest.raises(StatusError) as refused:
        plan_of(text)
    return refused.value


class Offloaded:
    """Process calls a run handed off, kept until the test lets one come back."""

    def __init__(self) -> None:
        self.calls: list[tuple[Callable, Callable]] = []

    def __call__(self, call: Callable, resume: Callable) -> None:
        self.calls.append((call, resume))

    def finish_next(self, run: GraphRun) -> None:
        call, resume = self.calls.pop(0)
        resume(call())
        run.drain()


class Running:
    """One graph instance, fed by the test; every output packet recorded."""

    def __init__(self, text: str, side_packets: dict | None = None, offload=None) -> None:
        self.outputs: list[tuple[str, Packet]] = []
        self.run = GraphRun(
            plan_of(text),
            side_packets or {},
            lambda stream, packet: self.outputs.append((stream, packet)),
            offload,
        )

    def send(self, stream: str, value: object, timestamp: int) -> Running:
        self.run.add_packet(stream, value, timestamp)
        self.run.drain()
        assert self.run.error is None, self.run.error
        return self

    def close(self) -> Running:
        self.run.close_inputs()
        self.run.drain()
        assert self.run.error is None, self.run.error
        return self

    def on(self, stream: str) -> list[tuple[int, object]]:
        return [(p.timestamp, p.value) for s, p in self.outputs if s == stream]


def unary(text: str, inputs: dict[str, object], timestamp: int = 0, sides: dict | None = None):
    """One unary request as the server runs it (one pass when the graph fits): value by stream."""
    config, nodes = nodes_of(text)
    plan = build_plan(config, nodes)
    runner = UnaryRunner(plan, nodes)
    if runner.single_pass:
        first = runner.run_now(sides or {}, list(inputs.items()), timestamp)
    else:
        first = run_unary(plan, sides or {}, list(inputs.items()), timestamp)
    return {stream: packet.value for stream, packet in first.items()}, runner.single_pass
