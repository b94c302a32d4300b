"""ConcatenateVectorCalculator: the inputs' vectors joined into one, in input order.

Contract (MediaPipe's concatenate_vector_calculator.h/.proto): one or more untagged inputs,
each a vector (a Python list or tuple) or a single element, and one untagged output, a list.
Inputs without a packet at the timestamp are skipped; with option
``only_emit_if_all_present`` (``ConcatenateVectorCalculatorOptions``) nothing is sent unless
every input has one. The output leaves at the inputs' timestamp. Registered under every
MediaPipe type-specific name below: a Python list holds any element type.
"""

from __future__ import annotations

from ovmsx.graph import mediapipe_graph_pb2 as pb
from ovmsx.graph.calculator import Calculator, CalculatorContext, CalculatorNode, GraphLoad
from ovmsx.graph.calculators.core.node_checks import options, untagged, untagged_only
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig

# mediapipe/calculators/core/concatenate_vector_calculator.cc (TfLite and GL ones left out:
# ovmsx carries no such tensors).
CONCATENATE_NAMES = (
    "ConcatenateTensorVectorCalculator",
    "ConcatenateFloatVectorCalculator",
    "ConcatenateInt32VectorCalculator",
    "ConcatenateUInt64VectorCalculator",
    "ConcatenateBoolVectorCalculator",
    "ConcatenateStringVectorCalculator",
    "ConcatenateImageVectorCalculator",
)


class ConcatenateNode(CalculatorNode):
    may_run_on_loop = True
    single_timestamp = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        untagged_only(node)
        if not node.inputs:
            raise contract_error(node, "it needs at least one input_stream")
        if len(node.outputs) != 1:
            raise contract_error(node, "it needs exactly one output_stream")
        self.inputs = tuple(ref.tag_index for ref in untagged(node.inputs))
        self.all_or_nothing = options(
            node, pb.ConcatenateVectorCalculatorOptions
        ).only_emit_if_all_present

    def create(self) -> Calculator:
        return Concatenate(self)


class Concatenate(Calculator):
    __slots__ = ("_node",)

    def __init__(self, node: ConcatenateNode) -> None:
        self._node = node

    def process(self, context: CalculatorContext) -> None:
        node, present = self._node, context.inputs
        if node.all_or_nothing and len(present) < len(node.inputs):
            return
        joined: list = []
        for tag_index in node.inputs:
            if tag_index in present:
                value = present[tag_index]
                if isinstance(value, list | tuple):
                    joined.extend(value)
                else:
                    joined.append(value)
        context.emit(":0", joined)
