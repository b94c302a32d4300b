"""One timestamp through a graph in one pass: the fast path for unary requests.

A unary request puts every graph input at one timestamp. When every node runs once per
timestamp and emits only at it (``CalculatorNode.single_timestamp``), synchronizes its inputs
the default or immediate way, and no input is a back edge, MediaPipe's scheduling comes down
to: open the nodes upstream first, run each node once, upstream first, with the inputs that
hold a packet (a node none of whose inputs got one does not run), then close them. This is
what the general scheduler (graph_run.py) would do for such a request, without its queues,
bounds and repeated scans; ``SinglePass.fits`` says, at load, whether a graph qualifies.

Errors read exactly as the general scheduler's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode
from ovmsx.graph.graph_plan import GraphPlan, NodePlan
from ovmsx.graph.graph_run import (
    calculator_failure,
    failure_of,
    invoke,
    publish_side_outputs,
    run_without_suspending,
    side_inputs,
)
from ovmsx.graph.packet import UNSET, Packet
from ovmsx.status import StatusCode, StatusError, status_error

_ONE_PASS_POLICIES = frozenset({"DefaultInputStreamHandler", "ImmediateInputStreamHandler"})


@dataclass(frozen=True)
class _Step:
    plan: NodePlan
    inputs: tuple[tuple[str, str], ...]  # (tag_index, stream)
    outputs: Mapping[str, str]  # tag_index -> stream

    @property
    def label(self) -> str:
        return self.plan.label

    @property
    def node(self) -> CalculatorNode:
        return self.plan.calculator

    @classmethod
    def of(cls, plan: NodePlan) -> _Step:
        return cls(
            plan=plan,
            inputs=tuple((tag_index, stream) for tag_index, stream, _ in plan.inputs),
            outputs=dict(plan.outputs),
        )


class _Failed(Exception):
    def __init__(self, error: StatusError) -> None:
        self.error = error


class SinglePass:
    def __init__(self, plan: GraphPlan) -> None:
        self._steps = tuple(_Step.of(node) for node in plan.nodes)
        self._observed = frozenset(plan.output_streams)

    @staticmethod
    def fits(plan: GraphPlan) -> bool:
        return all(
            node.calculator.single_timestamp
            and node.policy in _ONE_PASS_POLICIES
            and not any(back for _, _, back in node.inputs)
            for node in plan.nodes
        )

    def run(
        self,
        side_packets: Mapping[str, object],
        inputs: Sequence[tuple[str, object]],
        timestamp: int,
    ) -> dict[str, Packet]:
        """The first packet of every graph output stream that got one (on a worker)."""
        return run_without_suspending(self._run(side_packets, inputs, timestamp, awaiting=False))

    async def run_async(
        self,
        side_packets: Mapping[str, object],
        inputs: Sequence[tuple[str, object]],
        timestamp: int,
    ) -> dict[str, Packet]:
        """The same on the event loop: nodes with ``process_async`` are awaited."""
        return await self._run(side_packets, inputs, timestamp, awaiting=True)

    async def _run(self, side_packets, inputs, timestamp, awaiting: bool) -> dict[str, Packet]:
        values = _values(inputs, timestamp)
        first = {s: Packet(v, timestamp) for s, v in values.items() if s in self._observed}
        sides = dict(side_packets)
        opened: list[tuple[_Step, Calculator, dict, dict]] = []
        error: StatusError | None = None
        try:
            for step in self._steps:
                calculator = step.node.create()
                try:
                    own_sides, state = side_inputs(step.plan, sides), {}
                except StatusError as error:
                    raise _Failed(error) from None
                opened.append((step, calculator, own_sides, state))
                if type(calculator).open is Calculator.open:
                    continue  # most calculators have nothing to open
                context = CalculatorContext(UNSET, {}, own_sides, state)
                _call(step, calculator.open, context)
                error = publish_side_outputs(step.plan, context, sides)
                if error is not None:
                    raise _Failed(error)
            for step, calculator, own_sides, state in opened:
                present = {tag: values[s] for tag, s in step.inputs if s in values}
                if not present:
                    continue  # nothing arrived at this timestamp: MediaPipe does not run it
                context = CalculatorContext(timestamp, present, own_sides, state)
                if awaiting and hasattr(calculator, "process_async"):
                    try:
                        await calculator.process_async(context)
                    except Exception as failure:
                        raise _Failed(failure_of(step.label, failure, "process")) from None
                else:
                    _call(step, calculator.process, context)
                _emit(step, context.emitted, timestamp, values, first, self._observed)
        except _Failed as failed:
            error = failed.error
        for step, calculator, own_sides, state in opened:
            if type(calculator).close is Calculator.close:
                continue
            try:
                _call(step, calculator.close, CalculatorContext(UNSET, {}, own_sides, state))
            except _Failed as failed:
                error = error or failed.error
        if error is not None:
            raise error
        return first


class OneNodePass:
    """A graph of one node offering ``call_once`` (see CalculatorNode), run for one timestamp:
    the same outcome as SinglePass, without a Calculator, its contexts and its open/close.
    Python nodes take this path, so a one-node Python graph costs little more than its
    handler's call."""

    def __init__(self, plan: GraphPlan) -> None:
        (node,) = plan.nodes
        self._step = _Step.of(node)
        self._observed = frozenset(plan.output_streams)

    @staticmethod
    def fits(plan: GraphPlan) -> bool:
        return (
            len(plan.nodes) == 1
            and plan.nodes[0].calculator.call_once is not None
            and SinglePass.fits(plan)
        )

    def run(
        self,
        side_packets: Mapping[str, object],
        inputs: Sequence[tuple[str, object]],
        timestamp: int,
    ) -> dict[str, Packet]:
        """The first packet of every graph output stream that got one."""
        step, observed = self._step, self._observed
        values = _values(inputs, timestamp)
        first = {s: Packet(v, timestamp) for s, v in values.items() if s in observed}
        side_inputs(step.plan, side_packets)  # refuses a request missing a required one
        present = {tag: values[s] for tag, s in step.inputs if s in values}
        if not present:
            return first  # nothing arrived at this timestamp: MediaPipe does not run it
        node = step.node
        call_once = node.call_once
        assert call_once is not None  # fits() checked it
        try:
            timer = node.timer
            emitted = call_once(present) if timer is None else timer.timed(call_once, present)
        except Exception as failure:
            raise failure_of(step.label, failure, "process") from None
        packets = [(tag_index, value, timestamp) for tag_index, value in emitted]
        try:
            _emit(step, packets, timestamp, values, first, observed)
        except _Failed as failed:
            raise failed.error from None
        return first

    async def run_async(
        self,
        side_packets: Mapping[str, object],
        inputs: Sequence[tuple[str, object]],
        timestamp: int,
    ) -> dict[str, Packet]:
        return self.run(side_packets, inputs, timestamp)


def _values(inputs: Sequence[tuple[str, object]], timestamp: int) -> dict[str, object]:
    """stream -> its packet's value at ``timestamp``; two packets on one stream refused."""
    values = dict(inputs)
    if len(values) < len(inputs):
        names = [stream for stream, _ in inputs]
        twice = sorted({stream for stream in names if names.count(stream) > 1})
        raise status_error(
            StatusCode.MEDIAPIPE_GRAPH_ADD_PACKET_INPUT_STREAM,
            f"two packets at timestamp {timestamp} on input stream {', '.join(twice)}",
        )
    return values


def _emit(
    step: _Step,
    emitted: Sequence[tuple[str, object, int]],
    timestamp: int,
    values: dict,
    first: dict,
    observed: frozenset[str],
) -> None:
    """Put a node's packets (tag_index, value, timestamp) on its output streams."""
    for tag_index, value, at in emitted:
        stream = step.outputs.get(tag_index)
        if stream is None:
            message = f"the node has no output stream {tag_index}"
            raise _Failed(calculator_failure(step.label, "INTERNAL", message, "process"))
        if at != timestamp or stream in values:
            message = (
                f"a second packet on stream {stream}"
                if at == timestamp
                else f"a packet at timestamp {at} on stream {stream}, not {timestamp}"
            )
            raise _Failed(calculator_failure(step.label, "INVALID_ARGUMENT", message, "process"))
        values[stream] = value
        if stream in observed:
            first.setdefault(stream, Packet(value, at))


def _call(step: _Step, method, context: CalculatorContext) -> None:
    error = invoke(step.node, step.label, method, context)
    if error is not None:
        raise _Failed(error)
