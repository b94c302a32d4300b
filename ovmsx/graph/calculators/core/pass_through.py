"""PassThroughCalculator: every input packet out again, unchanged, on the matching output.

Contract (MediaPipe's pass_through_calculator.cc): any number of streams, tagged or not, the
outputs' TAG:INDEX set equal to the inputs'; the same for side packets when output side
packets are given (they are forwarded in open). No options. Each packet leaves at its own
timestamp, and bounds pass through (MediaPipe sets offset 0).
"""

from __future__ import annotations

from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode, GraphLoad
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig


class PassThroughNode(CalculatorNode):
    may_run_on_loop = True
    single_timestamp = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        inputs = sorted(ref.tag_index for ref in node.inputs)
        if inputs != sorted(ref.tag_index for ref in node.outputs):
            raise contract_error(
                node,
                "Input and output streams to PassThroughCalculator must use matching tags and "
                "indexes.",
            )
        sides = sorted(ref.tag_index for ref in node.input_side_packets)
        outputs = sorted(ref.tag_index for ref in node.output_side_packets)
        if outputs and sides != outputs:
            raise contract_error(
                node,
                "Input and output side packets to PassThroughCalculator must use matching tags "
                "and indexes.",
            )
        self.forwards_side_packets = bool(outputs)

    def create(self) -> Calculator:
        return PassThrough(self.forwards_side_packets)


class PassThrough(Calculator):
    __slots__ = ("_sides",)

    def __init__(self, forwards_side_packets: bool) -> None:
        self._sides = forwards_side_packets

    def open(self, context: CalculatorContext) -> None:
        if self._sides:
            context.side_outputs.update(context.side_packets)

    def process(self, context: CalculatorContext) -> None:
        for tag_index, value in context.inputs.items():
            context.emit(tag_index, value)
