"""SplitVectorCalculator: slices of one vector, each on its own output (or joined on one).

Contract (MediaPipe's split_vector_calculator.h/.proto): one input, a vector (a Python list or
tuple); options ``SplitVectorCalculatorOptions`` give ``ranges`` [begin, end), one untagged
output per range, each carrying ``vector[begin:end]``. ``element_only``: every range has one
element, sent as itself rather than a list of one. ``combine_outputs``: one output carrying
all ranges joined, in order; the ranges must not overlap. Outputs leave at the input's
timestamp; a vector shorter than the largest ``end`` fails the node. Registered under every
MediaPipe type-specific name below.
"""

from __future__ import annotations

import itertools

from ovmsx.graph import mediapipe_graph_pb2 as pb
from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
from ovmsx.graph.calculators.core.node_checks import options, untagged, untagged_only
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig

# mediapipe/calculators/core/split_vector_calculator.cc (TfLite ones left out).
SPLIT_NAMES = (
    "SplitTensorVectorCalculator",
    "SplitFloatVectorCalculator",
    "SplitUint64tVectorCalculator",
)


class SplitNode(CalculatorNode):
    may_run_on_loop = True
    single_timestamp = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        untagged_only(node)
        if len(node.inputs) != 1:
            raise contract_error(node, "it needs exactly one input_stream")
        settings = options(node, pb.SplitVectorCalculatorOptions)
        ranges = [(r.begin, r.end) for r in settings.ranges]
        for begin, end in ranges:
            if begin < 0 or end < 0 or begin >= end:
                raise contract_error(
                    node,
                    "Indices should be non-negative and begin index should be less than the end "
                    "index.",
                )
        if settings.element_only and any(end - begin != 1 for begin, end in ranges):
            raise contract_error(
                node, "Since element_only is true, all ranges should be of size 1."
            )
        outputs = untagged(node.outputs)
        if settings.combine_outputs:
            if settings.element_only:
                raise contract_error(node, "element_only and combine_outputs exclude each other")
            if len(outputs) != 1:
                raise contract_error(
                    node, "combine_outputs needs exactly one output_stream for all ranges"
                )
            ordered = sorted(ranges)
            if any(a[1] > b[0] for a, b in itertools.pairwise(ordered)):
                raise contract_error(
                    node, "Ranges must be non-overlapping when using combine_outputs option."
                )
        elif len(outputs) != len(ranges) or not ranges:
            raise contract_error(
                node,
                "The number of output streams should match the number of ranges specified in "
                "the CalculatorOptions.",
            )
        self.ranges = tuple(ranges)
        self.outputs = tuple(ref.tag_index for ref in outputs)
        self.element_only = settings.element_only
        self.combine = settings.combine_outputs
        self.needed = max((end for _, end in ranges), default=0)

    def create(self) -> Calculator:
        return Split(self)


class Split(Calculator):
    __slots__ = ("_node",)

    def __init__(self, node: SplitNode) -> None:
        self._node = node

    def process(self, context: CalculatorContext) -> None:
        node = self._node
        vector = context.inputs.get(":0")
        if not isinstance(vector, list | tuple):
            raise NodeFailure(f"the input carries {type(vector).__name__}, not a vector (list)")
        if len(vector) < node.needed:
            raise NodeFailure(
                f"the input vector has {len(vector)} elements; the ranges need {node.needed}",
                "INVALID_ARGUMENT",
            )
        if node.combine:
            joined = [item for begin, end in node.ranges for item in vector[begin:end]]
            context.emit(node.outputs[0], joined)
            return
        for (begin, end), target in zip(node.ranges, node.outputs, strict=True):
            context.emit(target, vector[begin] if node.element_only else list(vector[begin:end]))
