"""GateCalculator: lets data packets through while the gate is open.

Contract (MediaPipe's gate_calculator.cc/.proto):
- the control is ``ALLOW`` or ``DISALLOW`` (bool), as an input stream or an input side packet,
  never both tags and never both kinds; without either, option ``allow`` decides (default:
  closed);
- untagged inputs are the data, each mapped to the untagged output of the same index;
- ``STATE_CHANGE`` (optional output): the new state (bool) at the timestamp where it changed,
  never for the first decision;
- options ``GateCalculatorOptions``: ``empty_packets_as_allow`` (a timestamp with data but no
  control packet lets the data through instead of holding it back), ``allow``.
The default input stream handler pairs data with the control at one timestamp; data that is
let through leaves at its timestamp, and bounds pass through otherwise. A control packet may
also be a one-element Tensor (what a Python node produces). ``initial_gate_state`` (newer
MediaPipe) is not supported.
"""

from __future__ import annotations

from ovmsx.graph import mediapipe_graph_pb2 as pb
from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode, GraphLoad
from ovmsx.graph.calculators.core.node_checks import allow_only, options, truth, untagged
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig

CONTROLS = ("ALLOW", "DISALLOW")
STATE_CHANGE = "STATE_CHANGE:0"


class GateNode(CalculatorNode):
    may_run_on_loop = True
    single_timestamp = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        allow_only(node, node.inputs, ("", *CONTROLS), "input_stream")
        allow_only(node, node.outputs, ("", "STATE_CHANGE"), "output_stream")
        allow_only(node, node.input_side_packets, CONTROLS, "input_side_packet")
        streams = [ref.tag for ref in node.inputs if ref.tag in CONTROLS]
        sides = [ref.tag for ref in node.input_side_packets]
        if len(streams) + len(sides) > 1:
            raise contract_error(
                node,
                "only one of ALLOW or DISALLOW may be given, as an input_stream or an "
                "input_side_packet, not both",
            )
        if len(untagged(node.inputs)) != len(untagged(node.outputs)):
            raise contract_error(
                node, "Number of data output streams must match with data input streams."
            )
        self.control_stream = f"{streams[0]}:0" if streams else None
        self.control_side = sides[0] if sides else None
        # With DISALLOW, a true packet closes the gate.
        self.inverted = (streams or sides or ["ALLOW"])[0] == "DISALLOW"
        self.options = options(node, pb.GateCalculatorOptions)
        self.data = tuple(ref.tag_index for ref in untagged(node.inputs))
        self.reports_changes = any(ref.tag == "STATE_CHANGE" for ref in node.outputs)

    def create(self) -> Calculator:
        return Gate(self)


class Gate(Calculator):
    __slots__ = ("_fixed", "_node", "_state")

    def __init__(self, node: GateNode) -> None:
        self._node = node
        self._state: bool | None = None  # the last decision, None before the first
        self._fixed: bool | None = None if node.control_stream else node.options.allow

    def open(self, context: CalculatorContext) -> None:
        node = self._node
        if node.control_side is not None:
            value = context.side_packet(node.control_side)
            self._fixed = truth(value, node.control_side) != node.inverted

    def process(self, context: CalculatorContext) -> None:
        node = self._node
        allowed = self._fixed
        if allowed is None:
            control = context.inputs.get(node.control_stream)
            if control is None:  # data here, no control packet at this timestamp
                allowed = node.options.empty_packets_as_allow
            else:
                allowed = truth(control, node.control_stream) != node.inverted
        if node.reports_changes and self._state is not None and allowed != self._state:
            context.emit(STATE_CHANGE, allowed)
        self._state = allowed
        if allowed:
            for tag_index in node.data:
                if tag_index in context.inputs:
                    context.emit(tag_index, context.inputs[tag_index])
