"""PyTensorOvTensorConverterCalculator: between Python nodes' tensors and OpenVINO tensors.

In OVMS the two are different types and the converter copies. ovmsx has one Tensor type, so
converting is a check and, towards Python, a rename: zero-copy both ways. As in OVMS (COMPAT
§3.6, §12.4): the pair of tags is ``OVTENSOR`` → ``OVMS_PY_TENSOR`` or the reverse; towards
Python ``tag_to_output_tensor_names`` must name the new Tensor; datatypes outside the numeric
KServe set (BYTES, custom ones) are refused with OVMS's messages.

Beyond OVMS, one node may carry several tensors: indexed tags pair up by index
(``OVTENSOR:0:a``/``OVTENSOR:1:b`` → ``OVMS_PY_TENSOR:0:x``/``OVMS_PY_TENSOR:1:y``; names from
``tag_to_output_tensor_names`` keys ``OVMS_PY_TENSOR``, ``OVMS_PY_TENSOR:1``, …), and list tags
(``OVTENSORS`` ↔ ``OVMS_PY_TENSORS``) convert every tensor of a list, keeping their names.
"""

from __future__ import annotations

from ovmsx import _core
from ovmsx.datatypes import element_size
from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig, StreamRef
from ovmsx.pipeline.shards import renamed

OPTIONS = "mediapipe.PyTensorOvTensorConverterCalculatorOptions"
OV, PY = "OVTENSOR", "OVMS_PY_TENSOR"
# The datatypes an OpenVINO tensor can have that KServe also names (OVMS's conversion table).
NUMERIC_DATATYPES = frozenset(
    {"BF16", "FP64", "FP32", "FP16", "INT64", "INT32", "INT16", "INT8",
     "UINT64", "UINT32", "UINT16", "UINT8", "BOOL"}
)  # fmt: skip


def _key(ref: StreamRef) -> str:
    return ref.tag if ref.index == 0 else f"{ref.tag}:{ref.index}"


class ConverterNode(CalculatorNode):
    may_run_on_loop = True
    single_timestamp = True

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        in_tags = {ref.tag for ref in node.inputs}
        out_tags = {ref.tag for ref in node.outputs}
        pairs = {(OV, PY), (PY, OV), (OV + "S", PY + "S"), (PY + "S", OV + "S")}
        if len(in_tags) != 1 or len(out_tags) != 1 or (*in_tags, *out_tags) not in pairs:
            raise contract_error(
                node,
                f"it converts {OV} to {PY} or back (one input tag and one output tag); "
                f"the node has inputs {sorted(in_tags)} and outputs {sorted(out_tags)}",
            )
        outputs = {ref.index: ref for ref in node.outputs}
        if sorted(outputs) != sorted(ref.index for ref in node.inputs):
            raise contract_error(node, "its input and output streams must pair up by index")
        self.to_python = next(iter(out_tags)).startswith(PY)
        self.vector = next(iter(in_tags)).endswith("S")
        options = node.options.get(OPTIONS)
        names = dict(options.tag_to_output_tensor_names) if options else {}
        # (input tag_index, output tag_index, name of the Python tensor made)
        self.pairs: list[tuple[str, str, str]] = []
        for ref in node.inputs:
            out = outputs[ref.index]
            name = ""
            if self.to_python and not self.vector:
                name = names.get(_key(out), "")
                if not name:
                    raise contract_error(
                        node, f'tag_to_output_tensor_names needs the key "{_key(out)}"'
                    )
            self.pairs.append((ref.tag_index, out.tag_index, name))

    def create(self) -> Calculator:
        return Converter(self)


class Converter(Calculator):
    __slots__ = ("_node",)

    def __init__(self, node: ConverterNode) -> None:
        self._node = node

    def process(self, context: CalculatorContext) -> None:
        node = self._node
        for source, target, name in node.pairs:
            value = context.inputs.get(source)
            if value is None:
                raise NodeFailure(f"no packet on input {source}")
            if node.vector:
                if not isinstance(value, list | tuple):
                    raise NodeFailure(f"{source} carries {type(value).__name__}, not a list")
                context.emit(target, [self._convert(t, "") for t in value])
            else:
                context.emit(target, self._convert(value, name))

    def _convert(self, tensor: object, name: str) -> _core.Tensor:
        if not isinstance(tensor, _core.Tensor):
            raise NodeFailure(f"Expected a Tensor, received {type(tensor).__name__}")
        if self._node.to_python:
            if tensor.datatype not in NUMERIC_DATATYPES:
                raise NodeFailure(
                    f"Undefined precision in input tensor: {tensor.datatype}", "INVALID_ARGUMENT"
                )
            return renamed(tensor, name) if name else tensor
        if tensor.datatype not in NUMERIC_DATATYPES:
            raise NodeFailure(
                f"Undefined precision in input python tensor: {tensor.datatype}",
                "INVALID_ARGUMENT",
            )
        expected = element_size(tensor.datatype)
        for dim in tensor.shape:
            expected *= dim
        if tensor.size != expected:
            raise NodeFailure(
                f"python buffer size: {tensor.size}; OV tensor size: {expected}; mismatch",
                "INVALID_ARGUMENT",
            )
        return tensor
