"""PreviousLoopbackCalculator: hands each MAIN packet the LOOP result of the previous one.

Contract (MediaPipe's previous_loopback_calculator.cc): inputs ``MAIN`` (any) and ``LOOP``
(any, a back edge: ``input_stream_info { tag_index: "LOOP" back_edge: true }``), output
``PREV_LOOP``. No options. For the first MAIN packet PREV_LOOP gets no packet, only its bound
moved past it; for each later MAIN packet at ``t``, PREV_LOOP carries, at ``t``, the LOOP
packet of the previous MAIN timestamp, or again just a bound when LOOP had none there.
MediaPipe forces the immediate input stream handler (LOOP comes later than MAIN) and lets the
calculator move the bound.
ovmsx learns that LOOP skipped a timestamp from LOOP's next packet (MediaPipe also from its
bound alone), so a loop that skips a timestamp holds PREV_LOOP back until the next one.
"""

from __future__ import annotations

from collections import deque

from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode, GraphLoad
from ovmsx.graph.calculators.core.node_checks import allow_only, tagged
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig

MAIN, LOOP, PREV_LOOP = "MAIN:0", "LOOP:0", "PREV_LOOP:0"


class PreviousLoopbackNode(CalculatorNode):
    may_run_on_loop = True
    input_policy = "ImmediateInputStreamHandler"
    own_bounds = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        allow_only(node, node.inputs, ("MAIN", "LOOP"), "input_stream")
        allow_only(node, node.outputs, ("PREV_LOOP",), "output_stream")
        for refs, tag, what in (
            (node.inputs, "MAIN", "input_stream"),
            (node.inputs, "LOOP", "input_stream"),
            (node.outputs, "PREV_LOOP", "output_stream"),
        ):
            if len(tagged(refs, tag)) != 1:
                raise contract_error(node, f'it needs exactly one "{tag}" {what}')

    def create(self) -> Calculator:
        return PreviousLoopback()


class PreviousLoopback(Calculator):
    __slots__ = ("_loop", "_loop_newest", "_pending", "_previous")

    def __init__(self) -> None:
        self._previous: int | None = None  # the last MAIN timestamp
        self._pending: deque[tuple[int, int | None]] = deque()  # (MAIN ts, previous MAIN ts)
        self._loop: dict[int, object] = {}  # LOOP packets not handed on yet, by timestamp
        self._loop_newest: int | None = None

    def process(self, context: CalculatorContext) -> None:
        now = context.timestamp
        if MAIN in context.inputs:
            self._pending.append((now, self._previous))
            self._previous = now
        if LOOP in context.inputs:
            self._loop[now] = context.inputs[LOOP]
            self._loop_newest = now
        while self._pending:
            main, previous = self._pending[0]
            if previous is not None and previous in self._loop:
                context.emit(PREV_LOOP, self._loop.pop(previous), main)
            elif previous is None or self._loop_skipped(previous):
                context.set_bound(PREV_LOOP, main + 1)  # nothing to hand on at ``main``
            else:
                break  # LOOP at ``previous`` may still come
            self._pending.popleft()
        self._forget_old_loop_packets()

    def _loop_skipped(self, stamp: int) -> bool:
        """LOOP has a packet past ``stamp``: it will never have one at ``stamp``."""
        return self._loop_newest is not None and self._loop_newest > stamp

    def _forget_old_loop_packets(self) -> None:
        # LOOP packets older than every MAIN still waiting can never be asked for.
        oldest = self._pending[0][1] if self._pending else self._previous
        for stamp in [s for s in self._loop if oldest is None or s < oldest]:
            del self._loop[stamp]
