"""SidePacketToStreamCalculator: side packets sent as stream packets.

Contract (MediaPipe's side_packet_to_stream_calculator.cc): exactly one output tag among
``AT_PRESTREAM``, ``AT_POSTSTREAM``, ``AT_ZERO``, ``AT_TICK``, ``AT_FIRST_TICK`` and
``AT_TIMESTAMP``, with N outputs (indexes 0..N-1) for N untagged input side packets, in order.
``AT_TICK``/``AT_FIRST_TICK`` go with a ``TICK`` input and only they; ``AT_TIMESTAMP`` with
a ``TIMESTAMP`` (int) side packet and only it. No options. Timestamps:
- ``AT_PRESTREAM``/``AT_POSTSTREAM``/``AT_ZERO``/``AT_TIMESTAMP``: once, when the node closes
  (it has no inputs, so at the start of the graph instance), at MediaPipe's PreStream, its
  PostStream, 0, or the TIMESTAMP value; the outputs then close;
- ``AT_TICK``: at every TICK packet's timestamp; ``AT_FIRST_TICK``: at the first only, then
  the outputs close. Bounds follow TICK.
"""

from __future__ import annotations

from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
from ovmsx.graph.calculators.core.node_checks import (
    POST_STREAM,
    PRE_STREAM,
    allow_only,
    tagged,
    untagged,
)
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig
from ovmsx.graph.packet import DONE, MAX_TIMESTAMP, MIN_TIMESTAMP

MODES = ("AT_PRESTREAM", "AT_POSTSTREAM", "AT_ZERO", "AT_TICK", "AT_FIRST_TICK", "AT_TIMESTAMP")
TICKED = ("AT_TICK", "AT_FIRST_TICK")
FIXED_TIMES = {"AT_PRESTREAM": PRE_STREAM, "AT_POSTSTREAM": POST_STREAM, "AT_ZERO": 0}


class SidePacketToStreamNode(CalculatorNode):
    may_run_on_loop = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        modes = {ref.tag for ref in node.outputs}
        if len(modes) != 1 or not modes <= set(MODES):
            raise contract_error(
                node,
                "Only one of AT_PRESTREAM, AT_POSTSTREAM, AT_ZERO, AT_TICK, AT_FIRST_TICK and "
                "AT_TIMESTAMP tags is allowed and required to specify output stream(s).",
            )
        (self.mode,) = modes
        if bool(tagged(node.inputs, "TICK")) != (self.mode in TICKED):
            raise contract_error(
                node,
                "Either both TICK input and tick (AT_TICK/AT_FIRST_TICK) output should be used "
                "or none of them.",
            )
        allow_only(node, node.inputs, ("TICK",), "input_stream")
        allow_only(node, node.input_side_packets, ("", "TIMESTAMP"), "input_side_packet")
        if bool(tagged(node.input_side_packets, "TIMESTAMP")) != (self.mode == "AT_TIMESTAMP"):
            raise contract_error(
                node,
                "Either both TIMESTAMP input side packet and AT_TIMESTAMP output should be "
                "used or none of them.",
            )
        values = untagged(node.input_side_packets)
        outputs = tagged(node.outputs, self.mode)
        if len(values) != len(outputs):
            raise contract_error(
                node,
                f"Same number of input side packets ({len(values)}) and output streams "
                f"({len(outputs)}) is required.",
            )
        pairs = zip(values, outputs, strict=True)
        self.pairs = tuple((value.tag_index, output.tag_index) for value, output in pairs)

    def create(self) -> Calculator:
        return SidePacketToStream(self)


class SidePacketToStream(Calculator):
    __slots__ = ("_node", "_sent")

    def __init__(self, node: SidePacketToStreamNode) -> None:
        self._node = node
        self._sent = False

    def process(self, context: CalculatorContext) -> None:
        node = self._node
        if node.mode == "AT_FIRST_TICK":
            if self._sent:
                return
            self._sent = True
            for _, target in node.pairs:
                context.set_bound(target, DONE)
        self._send(context, context.timestamp)

    def close(self, context: CalculatorContext) -> None:
        node = self._node
        if node.mode in TICKED:
            return
        if node.mode == "AT_TIMESTAMP":
            at = context.side_packet("TIMESTAMP")
            if not isinstance(at, int) or isinstance(at, bool):
                raise NodeFailure(f"TIMESTAMP must be an int, not {type(at).__name__}")
            if not MIN_TIMESTAMP <= at <= MAX_TIMESTAMP:
                raise NodeFailure(f"TIMESTAMP {at} is not a packet timestamp", "INVALID_ARGUMENT")
        else:
            at = FIXED_TIMES[node.mode]
        self._send(context, at)

    def _send(self, context: CalculatorContext, at: int) -> None:
        for source, target in self._node.pairs:
            context.emit(target, context.side_packets[source], at)
