"""PacketClonerCalculator: on every tick, the latest packet of each other input, re-stamped.

Contract (MediaPipe's packet_cloner_calculator.cc/.proto): the tick is the input tagged
``TICK``, or else the last untagged input; the other untagged inputs are cloned, each to the
untagged output of the same position. On a tick at ``t`` each output gets the latest packet
its input has had (at or before ``t``), stamped ``t``; an input that never had one gets no
packet, only its bound moved past ``t``. Options ``PacketClonerCalculatorOptions``:
``output_only_when_all_inputs_received`` drops ticks until every input has had a packet;
``output_packets_only_when_all_inputs_received`` does too, and moves the outputs' bounds past
each dropped tick. Default input stream handler (packets at the tick's timestamp count).
"""

from __future__ import annotations

from ovmsx.graph import mediapipe_graph_pb2 as pb
from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode, GraphLoad
from ovmsx.graph.calculators.core.node_checks import allow_only, options, tagged, untagged
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig

_UNSEEN = object()


class PacketClonerNode(CalculatorNode):
    may_run_on_loop = True
    single_timestamp = True
    own_bounds = True  # a dropped tick leaves the bounds alone, unless the option says so

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        allow_only(node, node.inputs, ("", "TICK"), "input_stream")
        allow_only(node, node.outputs, ("",), "output_stream")
        data = untagged(node.inputs)
        ticks = tagged(node.inputs, "TICK")
        if ticks:
            self.tick = ticks[0].tag_index
        elif data:
            self.tick = data.pop().tag_index  # without TICK, the last untagged input ticks
        else:
            raise contract_error(node, "it needs a tick input (TICK, or a last untagged input)")
        outputs = untagged(node.outputs)
        if len(outputs) != len(data):
            raise contract_error(
                node,
                f"it clones {len(data)} input_stream(s) and so needs as many untagged "
                f"output_streams, not {len(outputs)}",
            )
        self.pairs = tuple((i.tag_index, o.tag_index) for i, o in zip(data, outputs, strict=True))
        settings = options(node, pb.PacketClonerCalculatorOptions)
        self.bound_dropped = settings.output_packets_only_when_all_inputs_received
        self.wait_for_all = settings.output_only_when_all_inputs_received or self.bound_dropped

    def create(self) -> Calculator:
        return PacketCloner(self)


class PacketCloner(Calculator):
    __slots__ = ("_latest", "_node")

    def __init__(self, node: PacketClonerNode) -> None:
        self._node = node
        self._latest = dict.fromkeys((source for source, _ in node.pairs), _UNSEEN)

    def process(self, context: CalculatorContext) -> None:
        node, latest = self._node, self._latest
        for source in latest:
            if source in context.inputs:
                latest[source] = context.inputs[source]
        if node.tick not in context.inputs:
            return
        after = context.timestamp + 1
        if node.wait_for_all and any(value is _UNSEEN for value in latest.values()):
            if node.bound_dropped:
                for _, target in node.pairs:
                    context.set_bound(target, after)
            return
        for source, target in node.pairs:
            if latest[source] is _UNSEEN:
                context.set_bound(target, after)
            else:
                context.emit(target, latest[source])
