"""FlowLimiterCalculator: lets at most ``max_in_flight`` frames into a slow part of the graph.

Contract (MediaPipe's flow_limiter_calculator.cc/.proto):
- untagged inputs are the frames, each mapped to the untagged output of the same index; the
  first is the main stream, the others (auxiliary) pass only at timestamps the main stream let
  through;
- ``FINISHED`` (any packet type) comes back from the end of the slow part, as a back edge
  (``input_stream_info { tag_index: "FINISHED" back_edge: true }``): a packet there at ``t``
  ends every frame in flight at or before ``t``;
- ``ALLOW`` (optional output): ``true`` at a frame's timestamp when it is let through,
  ``false`` when it is dropped;
- ``MAX_IN_FLIGHT`` (optional int side packet) overrides the option;
- options ``FlowLimiterCalculatorOptions``: ``max_in_flight`` (1), ``max_in_queue`` (0: a frame
  that cannot go at once is dropped), ``in_flight_timeout`` (µs of stream time, 1 s; 0 = none):
  a frame in flight that long before the newest main frame is given up.
Frames wait in arrival order; when the queue is longer than ``max_in_queue`` the oldest go.
MediaPipe forces the immediate input stream handler (each input on its own) and lets the
calculator move its output bounds: the main output's bound is the oldest queued frame, or just
past the newest frame when none waits. The ``OPTIONS`` stream / side packet (options changed
at run time) is not supported and refused at load.
"""

from __future__ import annotations

from collections import deque

from ovmsx.graph import mediapipe_graph_pb2 as pb
from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
from ovmsx.graph.calculators.core.node_checks import allow_only, options, tagged, untagged
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig

FINISHED, ALLOW, MAX_IN_FLIGHT = "FINISHED:0", "ALLOW:0", "MAX_IN_FLIGHT"
PASSED_KEPT = 1024


class FlowLimiterNode(CalculatorNode):
    may_run_on_loop = True
    input_policy = "ImmediateInputStreamHandler"
    own_bounds = True
    optional_side_packets = frozenset({MAX_IN_FLIGHT})

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        for refs, what in ((node.inputs, "input_stream"), (node.input_side_packets, "side packet")):
            if tagged(refs, "OPTIONS"):
                raise contract_error(node, f"the OPTIONS {what} is not supported by ovmsx")
        allow_only(node, node.inputs, ("", "FINISHED"), "input_stream")
        allow_only(node, node.outputs, ("", "ALLOW"), "output_stream")
        allow_only(node, node.input_side_packets, (MAX_IN_FLIGHT,), "input_side_packet")
        frames = untagged(node.inputs)
        if not frames:
            raise contract_error(node, "it needs at least one untagged (frame) input_stream")
        if len(untagged(node.outputs)) != len(frames):
            raise contract_error(
                node, "each untagged input_stream needs its untagged output_stream, in order"
            )
        if not tagged(node.inputs, "FINISHED"):
            raise contract_error(
                node, 'it needs the "FINISHED" input_stream, a back edge from the limited part'
            )
        self.options = options(node, pb.FlowLimiterCalculatorOptions)
        # Output i carries input i's frames: both are ":i", built here, not per packet.
        self.frames = tuple(f":{index}" for index in range(len(frames)))
        self.has_allow = bool(tagged(node.outputs, "ALLOW"))

    def create(self) -> Calculator:
        return FlowLimiter(self)


class FlowLimiter(Calculator):
    def __init__(self, node: FlowLimiterNode) -> None:
        self._node = node
        self._max_in_flight = node.options.max_in_flight
        self._queues: list[deque[tuple[int, object]]] = [deque() for _ in node.frames]
        self._in_flight: deque[int] = deque()  # timestamps let through, not FINISHED yet
        # Let-through timestamps auxiliary frames may still arrive at (bounded: an auxiliary
        # frame later than that many main frames is dropped).
        self._passed: deque[int] = deque(maxlen=PASSED_KEPT)
        self._newest = None  # timestamp of the newest main frame

    def open(self, context: CalculatorContext) -> None:
        given = context.side_packet(MAX_IN_FLIGHT)
        if given is not None:
            if not isinstance(given, int) or isinstance(given, bool):
                raise NodeFailure(f"MAX_IN_FLIGHT must be an int, not {type(given).__name__}")
            self._max_in_flight = given

    def process(self, context: CalculatorContext) -> None:
        options = self._node.options
        now = context.timestamp
        if FINISHED in context.inputs:
            while self._in_flight and self._in_flight[0] <= now:
                self._in_flight.popleft()
        for tag_index, queue in zip(self._node.frames, self._queues, strict=True):
            if tag_index in context.inputs:
                queue.append((now, context.inputs[tag_index]))
        if ":0" in context.inputs:
            self._newest = now
            # Frames in flight for longer than the timeout (in stream time) are given up.
            timeout = options.in_flight_timeout
            while timeout > 0 and self._in_flight and now - self._in_flight[0] > timeout:
                self._in_flight.popleft()
        main = self._queues[0]
        while main and len(self._in_flight) < self._max_in_flight:
            stamp, frame = main.popleft()
            context.emit(":0", frame, stamp)
            self._allow(context, True, stamp)
            self._in_flight.append(stamp)
            self._passed.append(stamp)
        while len(main) > max(options.max_in_queue, 0):
            stamp, _ = main.popleft()
            self._allow(context, False, stamp)
        self._bound_outputs(context)

    def _allow(self, context: CalculatorContext, allowed: bool, stamp: int) -> None:
        if self._node.has_allow:
            context.emit(ALLOW, allowed, stamp)

    def _bound_outputs(self, context: CalculatorContext) -> None:
        main = self._queues[0]
        if main:
            decided = main[0][0]  # the oldest waiting frame may still go
        elif self._newest is not None:
            decided = self._newest + 1
            if self._node.has_allow:
                context.set_bound(ALLOW, decided)
        else:
            return
        context.set_bound(":0", decided)
        # Auxiliary frames go out only at timestamps the main stream let through. An auxiliary
        # frame may come after the main one it goes with, so an auxiliary output's bound
        # stays at its own newest frame.
        for tag_index, queue in zip(self._node.frames[1:], self._queues[1:], strict=True):
            newest = queue[-1][0] if queue else None
            while queue and queue[0][0] < decided:
                stamp, frame = queue.popleft()
                if stamp in self._passed:
                    context.emit(tag_index, frame, stamp)
            if newest is not None:
                context.set_bound(tag_index, min(decided, newest + 1))
        if len(self._queues) == 1:
            self._passed.clear()

    def close(self, context: CalculatorContext) -> None:
        for queue in self._queues:
            queue.clear()
