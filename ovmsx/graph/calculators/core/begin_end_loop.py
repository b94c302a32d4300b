"""BeginLoopCalculator and EndLoopCalculator: run part of a graph once per element of a vector.

Contract (MediaPipe's begin_loop_calculator.h / end_loop_calculator.h):
- BeginLoop takes ``ITERABLE`` (a vector: Python list or tuple), optional ``TICK``
  (deprecated) and N ``CLONE`` inputs matched by N ``CLONE`` outputs. It sends each element on
  ``ITEM`` at its own loop timestamp (a counter from 0 kept across vectors), the CLONE packets
  of the outer timestamp at each of those, then on ``BATCH_END`` the outer timestamp (an int)
  at the last loop timestamp used. An empty or absent vector uses one loop timestamp with no
  ITEM (only bounds move) and still sends BATCH_END.
- EndLoop collects ``ITEM`` packets until ``BATCH_END`` (required: "Missing BATCH_END tagged
  input_stream."), then sends the list on ``ITERABLE`` at the outer timestamp BATCH_END
  carries; with nothing collected it moves ITERABLE's bound past that timestamp instead.
Both move their own bounds (loop timestamps are not the outer ones). Registered under every
MediaPipe type-specific name below: a Python list holds any element type.
"""

from __future__ import annotations

from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
from ovmsx.graph.calculators.core.node_checks import allow_only, tagged
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig

# mediapipe/calculators/core/begin_loop_calculator.cc / end_loop_calculator.cc: the element
# types ovmsx streams can carry (Tensor, numbers, strings, images).
BEGIN_LOOP_NAMES = (
    "BeginLoopTensorCalculator",
    "BeginLoopIntCalculator",
    "BeginLoopFloatCalculator",
    "BeginLoopUint64tCalculator",
    "BeginLoopStringCalculator",
    "BeginLoopImageFrameCalculator",
    "BeginLoopImageCalculator",
)
END_LOOP_NAMES = (
    "EndLoopTensorCalculator",
    "EndLoopBooleanCalculator",
    "EndLoopFloatCalculator",
    "EndLoopImageFrameCalculator",
    "EndLoopImageCalculator",
)
ITERABLE, ITEM, BATCH_END = "ITERABLE:0", "ITEM:0", "BATCH_END:0"


class BeginLoopNode(CalculatorNode):
    may_run_on_loop = True
    own_bounds = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        allow_only(node, node.inputs, ("ITERABLE", "TICK", "CLONE"), "input_stream")
        allow_only(node, node.outputs, ("ITEM", "BATCH_END", "CLONE"), "output_stream")
        if not tagged(node.inputs, "ITERABLE"):
            raise contract_error(node, 'it needs the "ITERABLE" input_stream')
        if not tagged(node.outputs, "ITEM") or not tagged(node.outputs, "BATCH_END"):
            raise contract_error(node, 'it needs the "ITEM" and "BATCH_END" output_streams')
        clones_in, clones_out = tagged(node.inputs, "CLONE"), tagged(node.outputs, "CLONE")
        if len(clones_in) != len(clones_out):
            raise contract_error(node, "the CLONE input_streams and output_streams must be as many")
        self.clones = tuple(ref.tag_index for ref in clones_in)
        self.outputs = tuple(ref.tag_index for ref in node.outputs)

    def create(self) -> Calculator:
        return BeginLoop(self)


class BeginLoop(Calculator):
    __slots__ = ("_next", "_node")

    def __init__(self, node: BeginLoopNode) -> None:
        self._node = node
        self._next = 0  # the next loop timestamp

    def process(self, context: CalculatorContext) -> None:
        node = self._node
        vector = context.inputs.get(ITERABLE)
        if vector is not None and not isinstance(vector, list | tuple):
            raise NodeFailure(f"ITERABLE carries {type(vector).__name__}, not a vector (list)")
        clones = [(tag, context.inputs[tag]) for tag in node.clones if tag in context.inputs]
        for item in vector or ():
            context.emit(ITEM, item, self._next)
            for tag, value in clones:
                context.emit(tag, value, self._next)
            self._next += 1
        if not vector:
            self._next += 1  # an empty vector still takes one loop timestamp
            for tag in node.outputs:
                context.set_bound(tag, self._next)
        context.emit(BATCH_END, context.timestamp, self._next - 1)


class EndLoopNode(CalculatorNode):
    may_run_on_loop = True
    own_bounds = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        allow_only(node, node.inputs, ("ITEM", "BATCH_END"), "input_stream")
        allow_only(node, node.outputs, ("ITERABLE",), "output_stream")
        if not tagged(node.inputs, "BATCH_END"):
            raise contract_error(node, "Missing BATCH_END tagged input_stream.")
        if not tagged(node.inputs, "ITEM") or not tagged(node.outputs, "ITERABLE"):
            raise contract_error(
                node, 'it needs the "ITEM" input_stream and the "ITERABLE" output_stream'
            )

    def create(self) -> Calculator:
        return EndLoop()


class EndLoop(Calculator):
    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: list = []

    def process(self, context: CalculatorContext) -> None:
        if ITEM in context.inputs:
            self._items.append(context.inputs[ITEM])
        if BATCH_END in context.inputs:
            outer = context.inputs[BATCH_END]
            if not isinstance(outer, int):
                raise NodeFailure(f"BATCH_END carries {type(outer).__name__}, not a timestamp")
            if self._items:
                context.emit(ITERABLE, self._items, outer)
            else:
                context.set_bound(ITERABLE, outer + 1)
            self._items = []
