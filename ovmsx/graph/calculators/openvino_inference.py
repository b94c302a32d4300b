"""OpenVINOInferenceCalculator: runs the servable of its ``SESSION`` side packet on its inputs.

Behaviour follows OVMS (COMPAT §12.2):
- the tag prefix picks the packet kind: ``OVTENSORS``/``TENSORS`` carry a list of tensors,
  ``OVTENSOR``/``TENSOR`` one tensor (``TENSOR`` limited to MediaPipe's datatypes), any other
  tag one OpenVINO tensor; ``TFTENSOR``/``TFLITE_TENSOR`` tags are refused at load;
- a single tag names the model tensor through ``tag_to_*_tensor_names``, else the tag itself;
  a list tag maps element i to ``input_order_list[i]``; a list output carries
  ``output_order_list``'s outputs, or all outputs in name order when that list is empty;
- a map and an order list for the same side at once is refused at load;
- inputs must all be present at once; every model-side error (wrong name, precision, shape)
  fails the request as a MEDIAPIPE_EXECUTION_ERROR, with the model's reason kept in the message
  (OVMS drops it).
Inference goes through the model's own pool of infer requests (``InferencePool.infer``): the
graph's worker thread runs it with the GIL released, zero-copy on the inputs.
Where OVMS only logs a bad setting (an order list without a list tag, a list tag without an
order list, a map key naming no tag) ovmsx logs a warning at load and loads the graph, as OVMS
does by default.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ovmsx import _core
from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
from ovmsx.graph.calculators.openvino_session import SESSION_TAG, SessionNode
from ovmsx.graph.contract import contract_error, refuse_tensorflow_tags, unique_tags
from ovmsx.graph.graph_config import NodeConfig, StreamRef
from ovmsx.status import StatusError

log = logging.getLogger("ovmsx.graph")

OPTIONS = "mediapipe.OpenVINOInferenceCalculatorOptions"
# MediaPipe's own tensor type holds only these (COMPAT §4.2, §12.2).
MEDIAPIPE_TENSOR_DATATYPES = frozenset({"FP32", "FP16", "INT32", "INT8", "UINT8", "BOOL"})


@dataclass(frozen=True)
class TagKind:
    vector: bool
    mediapipe: bool  # TENSOR/TENSORS: MediaPipe's datatypes only


def tag_kind(tag: str) -> TagKind:
    """The packet kind of an inference-calculator tag, by OVMS's prefix order."""
    if tag.startswith("OVTENSORS"):
        return TagKind(vector=True, mediapipe=False)
    if tag.startswith("OVTENSOR"):
        return TagKind(vector=False, mediapipe=False)
    if tag.startswith("TENSORS"):
        return TagKind(vector=True, mediapipe=True)
    if tag.startswith("TENSOR"):
        return TagKind(vector=False, mediapipe=True)
    return TagKind(vector=False, mediapipe=False)


@dataclass(frozen=True)
class _Port:
    tag: str
    tag_index: str
    kind: TagKind
    name: str  # the model tensor of a single tag ("" for a list tag)


class InferenceNode(CalculatorNode):
    may_run_on_loop = True
    single_timestamp = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        options = node.options.get(OPTIONS)
        in_map = dict(options.tag_to_input_tensor_names) if options else {}
        out_map = dict(options.tag_to_output_tensor_names) if options else {}
        self.input_order = tuple(options.input_order_list) if options else ()
        self.output_order = tuple(options.output_order_list) if options else ()
        if not node.inputs or not node.outputs:
            raise contract_error(node, "it needs at least one input and one output stream")
        refuse_tensorflow_tags(node, (*node.inputs, *node.outputs))
        unique_tags(node, node.inputs, "input")
        unique_tags(node, node.outputs, "output")
        if SESSION_TAG not in {ref.tag for ref in node.input_side_packets}:
            raise contract_error(node, f'it needs input_side_packet "{SESSION_TAG}:<name>"')
        if node.output_side_packets:
            raise contract_error(node, "it publishes no output side packets")
        for side, mapping, order in (
            ("input", in_map, self.input_order),
            ("output", out_map, self.output_order),
        ):
            if mapping and order:
                raise contract_error(
                    node,
                    f"Use tag_to_{side}_tensor_names or {side}_order_list not both at once",
                )
        self.inputs = tuple(sorted((_port(ref, in_map) for ref in node.inputs), key=_by_tag))
        self.outputs = tuple(sorted((_port(ref, out_map) for ref in node.outputs), key=_by_tag))
        self._warn_about_settings(in_map, out_map)
        self.session_node = _session_node(node, load)

    def _warn_about_settings(self, in_map: dict, out_map: dict) -> None:
        for side, ports, mapping, order in (
            ("input", self.inputs, in_map, self.input_order),
            ("output", self.outputs, out_map, self.output_order),
        ):
            if order and not any(p.kind.vector for p in ports):
                log.warning("node %s: %s_order_list without a list tag", self.node.label, side)
            if side == "input" and not order and any(p.kind.vector for p in ports):
                log.warning("node %s: a list input tag needs input_order_list", self.node.label)
            for key in sorted(set(mapping) - {p.tag for p in ports}):
                log.warning(
                    "node %s: tag_to_%s_tensor_names key %s names no %s tag",
                    self.node.label, side, key, side,
                )  # fmt: skip

    def create(self) -> Calculator:
        return InferenceCalculator(self)

    def input_port(self, tag_index: str) -> object | None:
        return self._port(tag_index, self.inputs, 0)

    def output_port(self, tag_index: str) -> object | None:
        return self._port(tag_index, self.outputs, 1)

    def _port(self, tag_index: str, ports: tuple[_Port, ...], side: int) -> object | None:
        port = next((p for p in ports if p.tag_index == tag_index), None)
        if port is None or port.kind.vector or self.session_node is None:
            return None
        known = self.session_node.ports()
        return None if known is None else known[side].get(port.name)


def _port(ref: StreamRef, mapping: dict[str, str]) -> _Port:
    kind = tag_kind(ref.tag)
    name = "" if kind.vector else mapping.get(ref.tag, ref.tag)
    return _Port(ref.tag, ref.tag_index, kind, name)


def _by_tag(port: _Port) -> str:
    return port.tag  # OVMS walks tags in std::set order


def _session_node(node: NodeConfig, load: GraphLoad) -> SessionNode | None:
    """The session node publishing this node's SESSION side packet (for metadata)."""
    if load.graph is None:
        return None
    wanted = next(ref.name for ref in node.input_side_packets if ref.tag == SESSION_TAG)
    for other in load.graph.nodes:
        if any(ref.name == wanted for ref in other.output_side_packets):
            try:
                return SessionNode(other, load)
            except StatusError:
                return None
    return None


class InferenceCalculator(Calculator):
    __slots__ = ("_node", "_session")

    def __init__(self, node: InferenceNode) -> None:
        self._node = node
        self._session = None

    def open(self, context: CalculatorContext) -> None:
        self._session = context.side_packet(SESSION_TAG)
        if self._session is None:
            raise NodeFailure("the SESSION side packet holds no servable session")

    def process(self, context: CalculatorContext) -> None:
        """On a graph worker: the inference blocks this thread (GIL released)."""
        inputs = self._inputs(context)
        try:
            outputs = self._session.infer(inputs)
        except StatusError as error:
            raise self._failure(error) from None
        self._emit(context, outputs)

    async def process_async(self, context: CalculatorContext) -> None:
        """On the event loop (graphs without user code): the inference is awaited."""
        inputs = self._inputs(context)
        try:
            outputs = await self._session.infer_async(inputs)
        except StatusError as error:
            raise self._failure(error) from None
        self._emit(context, outputs)

    def _failure(self, error: StatusError) -> NodeFailure:
        return NodeFailure(f"Inference of {self._session.name} failed: {error.message}")

    def _inputs(self, context: CalculatorContext) -> dict[str, _core.Tensor]:
        node = self._node
        inputs: dict[str, _core.Tensor] = {}
        for port in node.inputs:
            value = context.inputs.get(port.tag_index)
            if value is None:
                raise NodeFailure(
                    "OpenVINOInferenceCalculator expects all input packets at the same time "
                    "for each call to Process()."
                )
            if port.kind.vector:
                if not isinstance(value, list | tuple) or len(value) != len(node.input_order):
                    raise NodeFailure("input_order_list size does not match the input vector size.")
                for name, tensor in zip(node.input_order, value, strict=True):
                    inputs[name] = _checked(tensor, port, "deserialization")
            else:
                inputs[port.name] = _checked(value, port, "deserialization")
        return inputs

    def _emit(self, context: CalculatorContext, outputs: dict[str, _core.Tensor]) -> None:
        node = self._node
        for port in node.outputs:
            if port.kind.vector:
                names = node.output_order or tuple(sorted(outputs))
                context.emit(port.tag_index, [_found(outputs, n, port) for n in names])
            else:
                context.emit(port.tag_index, _found(outputs, port.name, port))


def _checked(value: object, port: _Port, direction: str) -> _core.Tensor:
    if not isinstance(value, _core.Tensor):
        raise NodeFailure(f"tag {port.tag} carries {type(value).__name__}, not a tensor")
    if port.kind.mediapipe and value.datatype not in MEDIAPIPE_TENSOR_DATATYPES:
        raise NodeFailure(
            f"Not supported precision for Mediapipe tensor {direction}: {value.datatype}"
        )
    return value


def _found(outputs: dict[str, _core.Tensor], name: str, port: _Port) -> _core.Tensor:
    tensor = outputs.get(name)
    if tensor is None:
        raise NodeFailure(f"Could not find: {name} in inference output")
    return _checked(tensor, port, "serialization")
