"""One running instance of a graph: the scheduler.

A ``GraphRun`` is driven by one thread at a time (see graph_workers.py), so it needs no locks:
packets go in with ``add_packet``, ``drain`` runs every node that is ready until none is, and
graph output packets leave through the ``on_output`` callback as soon as they exist.

Rules it keeps, as MediaPipe does:
- timestamps strictly increase on every stream; a packet below a stream's bound is an error;
- a node never runs two timestamps at once, and sees its timestamps in increasing order;
- after a node runs at ``t`` (or can no longer receive anything before ``t``), its outputs'
  bounds pass ``t``, so nodes downstream waiting for a packet that will not come move on;
- a node closes when all its inputs (back edges aside) are closed and drained, and closing it
  closes its outputs;
- nodes open upstream first; a node's output side packets (set in ``open``) reach the nodes
  that read them, and a side packet nobody provides stops the instance before it starts;
- the first failure stops the instance; ``error`` then says why.

A node whose calculator moves its own bounds (``CalculatorNode.own_bounds``) is left to do so;
packets a calculator sends from ``close`` are delivered before its outputs close.

Given ``offload`` (a stream's session does), a call into user code not yet measured quick runs
on another thread while the instance goes on: MediaPipe runs every node on its own schedule,
and calculators such as FlowLimiterCalculator exist to drop or queue what arrives while a slow
node works, which they cannot see if the slow call holds the only thread driving the graph.
The node stays busy (runs nothing else) until ``offload`` hands the result back through the
thread that drives the instance; ``busy`` says whether such a call is out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode, NodeFailure
from ovmsx.graph.graph_plan import GraphPlan, NodePlan
from ovmsx.graph.input_policies import POLICIES, InputSlot, SyncSetPolicy
from ovmsx.graph.packet import DONE, UNSET, Packet
from ovmsx.status import StatusCode, StatusError, status_error

OutputCallback = Callable[[str, Packet], None]
# offload(call, resume): run ``call()`` on another thread, then ``resume(its result)`` on the
# thread driving the instance (one job at a time, as every other call), and drain again.
CallResult = StatusError | None
Offload = Callable[[Callable[[], CallResult], Callable[[CallResult], None]], None]


class _Stream:
    __slots__ = ("bound", "consumers", "name", "observed")

    def __init__(self, name: str) -> None:
        self.name = name
        self.bound = UNSET
        self.consumers: list[InputSlot] = []
        self.observed = False  # a graph output stream


class _Node:
    __slots__ = (
        "busy",
        "calculator",
        "closed",
        "label",
        "outputs",
        "plan",
        "policy",
        "side_packets",
        "slots",
        "state",
    )

    def __init__(self, plan: NodePlan, streams: dict[str, _Stream]) -> None:
        self.plan = plan
        self.label = plan.label
        self.calculator: Calculator = plan.calculator.create()
        self.slots = [InputSlot(tag, name, back) for tag, name, back in plan.inputs]
        for slot in self.slots:
            streams[slot.stream].consumers.append(slot)
        self.outputs = {tag: streams[name] for tag, name in plan.outputs}
        if plan.policy == "SyncSetInputStreamHandler":
            self.policy = SyncSetPolicy(self.slots, plan.sync_sets)
        else:
            self.policy = POLICIES[plan.policy](self.slots)
        self.state: dict = {}  # the node's per-instance state (see CalculatorContext)
        self.side_packets: dict[str, object] = {}  # tag_index -> value, filled at open
        self.closed = False
        self.busy = False  # a process call of this node runs on another thread


def _blocks(node: _Node) -> bool:
    """User code not (yet) measured quick: the calls worth running off the driving thread."""
    calculator = node.plan.calculator
    return calculator.timer is not None and not calculator.may_run_on_loop


class GraphRun:
    def __init__(
        self,
        plan: GraphPlan,
        side_packets: Mapping[str, object],
        on_output: OutputCallback,
        offload: Offload | None = None,
    ) -> None:
        self._offload = offload
        self._side_packets = dict(side_packets)  # by name; nodes add theirs as they open
        self._on_output = on_output
        self._streams: dict[str, _Stream] = {}
        for node in plan.nodes:
            for _, name, _ in node.inputs:
                self._streams.setdefault(name, _Stream(name))
            for _, name in node.outputs:
                self._streams.setdefault(name, _Stream(name))
        for name in (*plan.input_streams, *plan.output_streams):
            self._streams.setdefault(name, _Stream(name))
        for name in plan.output_streams:
            self._streams[name].observed = True
        self._inputs = [self._streams[name] for name in plan.input_streams]
        self.error: StatusError | None = None
        self._nodes = [_Node(node, self._streams) for node in plan.nodes]
        for node in self._nodes:
            if self.error is None:
                self._open(node)

    @property
    def finished(self) -> bool:
        """Every node has closed, or the instance failed."""
        return self.error is not None or all(node.closed for node in self._nodes)

    @property
    def busy(self) -> bool:
        """A process call handed to ``offload`` has not come back yet."""
        return any(node.busy for node in self._nodes)

    # -- feeding ---------------------------------------------------------------------------

    def add_packet(self, stream: str, value: object, timestamp: int) -> None:
        """Put a packet on a graph input stream; ``StatusError`` if the stream refuses it."""
        if self.error is not None:
            raise self.error
        target = self._streams[stream]
        if timestamp < target.bound:
            raise status_error(
                StatusCode.MEDIAPIPE_GRAPH_ADD_PACKET_INPUT_STREAM,
                f"timestamp {timestamp} on input stream {stream} is not greater than the "
                f"previous one ({target.bound - 1}); timestamps must increase",
            )
        self._push(target, Packet(value, timestamp))

    def close_inputs(self) -> None:
        """No more packets will come from outside: let every node finish."""
        for stream in self._inputs:
            self._advance(stream, DONE)

    # -- running ---------------------------------------------------------------------------

    def drain(self, budget: int = 1 << 62) -> bool:
        """Run ready nodes, upstream first, until nothing can run or ``budget`` calls were
        made; True when work is left (call again)."""
        return run_without_suspending(self._drain(budget, awaiting=False))

    async def drain_async(self) -> None:
        """Like ``drain`` without a budget, on the event loop: calculators that have a
        ``process_async`` (OpenVINO inference) are awaited instead of blocking a thread."""
        await self._drain(1 << 62, awaiting=True)

    async def _drain(self, budget: int, awaiting: bool) -> bool:
        calls = 0
        progress = True
        while progress and self.error is None:
            progress = False
            for node in self._nodes:
                if node.closed or node.busy or self.error is not None:
                    continue
                selection = node.policy.select()
                if selection is None:
                    progress = self._settle(node) or progress
                    continue
                if self._offload is not None and _blocks(node):
                    self._process_elsewhere(node, *selection)
                elif awaiting and hasattr(node.calculator, "process_async"):
                    await self._process_async(node, *selection)
                else:
                    self._process(node, *selection)
                progress = True
                calls += 1
                if calls >= budget:
                    return self.error is None
        return False

    def abort(self) -> None:
        """End the instance now: close every calculator that is still open."""
        for node in self._nodes:
            if not node.closed:
                node.closed = True
                if not node.busy:  # never close a calculator while its process call runs
                    self._call(node, node.calculator.close, self._context(node, UNSET, {}))

    # -- internals -------------------------------------------------------------------------

    def _context(self, node: _Node, timestamp: int, values: dict) -> CalculatorContext:
        return CalculatorContext(timestamp, values, node.side_packets, node.state)

    def _open(self, node: _Node) -> None:
        plan = node.plan
        try:
            node.side_packets = side_inputs(plan, self._side_packets)
        except StatusError as error:
            self.error = error
            return
        context = self._context(node, UNSET, {})
        self._call(node, node.calculator.open, context)
        if self.error is None:
            self._record(publish_side_outputs(plan, context, self._side_packets))

    def _process(self, node: _Node, timestamp: int, slots: list[InputSlot]) -> None:
        context = self._take(node, timestamp, slots)
        self._call(node, node.calculator.process, context)
        self._emit_all(node, context)

    def _process_elsewhere(self, node: _Node, timestamp: int, slots: list[InputSlot]) -> None:
        context = self._take(node, timestamp, slots)
        node.busy = True
        calculator = node.plan.calculator

        def call() -> StatusError | None:  # on another thread: touches only this node's call
            return invoke(calculator, node.label, node.calculator.process, context)

        def resume(error: StatusError | None) -> None:
            node.busy = False
            self._record(error)
            self._emit_all(node, context)

        assert self._offload is not None
        self._offload(call, resume)

    async def _process_async(self, node: _Node, timestamp: int, slots: list[InputSlot]) -> None:
        context = self._take(node, timestamp, slots)
        try:
            await node.calculator.process_async(context)
        except Exception as failure:
            self._record(failure_of(node.label, failure, "process"))
        self._emit_all(node, context)

    def _take(self, node: _Node, timestamp: int, slots: list[InputSlot]) -> CalculatorContext:
        values = {slot.tag_index: slot.queue.popleft().value for slot in slots}
        return self._context(node, timestamp, values)

    def _emit_all(self, node: _Node, context: CalculatorContext) -> None:
        if self.error is not None or not self._emit_packets(node, context):
            return
        for tag_index, bound in context.bounds:
            stream = node.outputs.get(tag_index)
            if stream is None:  # as for a packet: a calculator bug, not to be ignored
                self._fail(node, "INTERNAL", f"the node has no output stream {tag_index}")
                return
            self._advance(stream, bound)
        if not node.plan.calculator.own_bounds:
            for stream in node.outputs.values():
                self._advance(stream, context.timestamp + 1)

    def _emit_packets(self, node: _Node, context: CalculatorContext) -> bool:
        """Put the packets a call sent on the node's outputs; False when one was refused."""
        for tag_index, value, at in context.emitted:
            stream = node.outputs.get(tag_index)
            if stream is None:
                self._fail(node, "INTERNAL", f"the node has no output stream {tag_index}")
                return False
            if at < stream.bound:
                self._fail(
                    node,
                    "INVALID_ARGUMENT",
                    f"packet timestamp {at} on stream {stream.name} is not greater than the "
                    f"previous one ({stream.bound - 1})",
                )
                return False
            self._push(stream, Packet(value, at))
        return True

    def _settle(self, node: _Node) -> bool:
        """Close a node that can receive nothing more, or pass its input bounds on."""
        lowest = min((slot.next_timestamp() for slot in node.slots), default=DONE)
        if lowest >= DONE:
            node.closed = True
            context = self._context(node, DONE, {})
            self._call(node, node.calculator.close, context)
            if self.error is None:  # packets sent from close (SidePacketToStreamCalculator)
                self._emit_packets(node, context)
            for stream in node.outputs.values():
                self._advance(stream, DONE)
            return True
        if node.plan.calculator.own_bounds:
            return False  # its bounds are its own to move (see CalculatorNode.own_bounds)
        moved = False
        for stream in node.outputs.values():
            if lowest > stream.bound:
                self._advance(stream, lowest)
                moved = True
        return moved

    def _push(self, stream: _Stream, packet: Packet) -> None:
        stream.bound = packet.timestamp + 1
        for slot in stream.consumers:
            slot.queue.append(packet)
            slot.bound = stream.bound
        if stream.observed:
            self._on_output(stream.name, packet)

    @staticmethod
    def _advance(stream: _Stream, bound: int) -> None:
        if bound > stream.bound:
            stream.bound = bound
            for slot in stream.consumers:
                slot.bound = max(slot.bound, bound)

    def _call(self, node: _Node, method, context: CalculatorContext) -> None:
        self._record(invoke(node.plan.calculator, node.label, method, context))

    def _record(self, error: StatusError | None) -> None:
        if self.error is None:
            self.error = error

    def _fail(self, node: _Node, code: str, message: str, stage: str = "process") -> None:
        self._record(calculator_failure(node.label, code, message, stage))


def run_without_suspending(coroutine):
    """Run a coroutine that never awaits anything to its end, on this thread, and return its
    result: how the schedulers share one body between their worker and event-loop forms."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise AssertionError("a coroutine meant to run without awaiting suspended")


def invoke(
    node: CalculatorNode, label: str, method, context: CalculatorContext
) -> StatusError | None:
    """Call a calculator's open/process/close; its failure as the request's error, if any.
    Process calls of user-code nodes are timed (see ``CalculatorNode.timer``)."""
    stage = method.__name__
    timer = node.timer if stage == "process" else None
    try:
        if timer is None:
            method(context)
        else:
            timer.timed(method, context)
    except Exception as failure:
        return failure_of(label, failure, stage)
    return None


def failure_of(label: str, failure: Exception, stage: str) -> StatusError:
    if isinstance(failure, NodeFailure):
        return calculator_failure(label, failure.code, str(failure), stage)
    # A calculator bug: the instance fails, the server goes on.
    return calculator_failure(label, "INTERNAL", f"{type(failure).__name__}: {failure}", stage)


def calculator_failure(label: str, code: str, message: str, stage: str) -> StatusError:
    """The request's error when a node's ``stage`` (open/process/close) failed with an
    absl-style ``code``: OVMS turns FAILED_PRECONDITION into its own precondition status and
    every other code into an execution error."""
    status = (
        StatusCode.MEDIAPIPE_PRECONDITION_FAILED
        if code == "FAILED_PRECONDITION"
        else StatusCode.MEDIAPIPE_EXECUTION_ERROR
    )
    return status_error(
        status, f'{code}: Calculator::{stage.capitalize()}() for node "{label}" failed: {message}'
    )


def side_inputs(plan: NodePlan, available: Mapping[str, object]) -> dict[str, object]:
    """A node's input side packets by tag_index, from those ``available`` by name. A missing
    one that the node cannot do without raises ``StatusError``: MediaPipe refuses to start a
    graph missing a side packet, and OVMS's side packets come from request parameters."""
    found = {}
    optional = plan.calculator.optional_side_packets
    for tag_index, name in plan.side_inputs:
        if name in available:
            found[tag_index] = available[name]
        elif tag_index.partition(":")[0] not in optional:
            raise status_error(
                StatusCode.MEDIAPIPE_GRAPH_START_ERROR,
                f'node "{plan.label}" needs input side packet "{name}" ({tag_index}), which no '
                "node produces and the request does not carry as a parameter",
            )
    return found


def publish_side_outputs(
    plan: NodePlan, context: CalculatorContext, available: dict[str, object]
) -> StatusError | None:
    """Add the side packets a node set in ``open`` to ``available``; the error if it set one
    it does not declare."""
    for tag_index, value in context.side_outputs.items():
        name = plan.side_outputs.get(tag_index)
        if name is None:
            message = f"the node has no output side packet {tag_index}"
            return calculator_failure(plan.label, "INTERNAL", message, "open")
        available[name] = value
    return None
