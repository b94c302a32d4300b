"""What a graph knows of the tensors on its input and output streams, for ModelMetadata.

OVMS reports every graph tensor with datatype "INVALID" and no shape. ovmsx reports the
model's datatype and shape where a stream reaches an OpenVINOInference node (directly or
through converters), and OVMS's answer elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from ovmsx.graph.calculator import CalculatorNode
from ovmsx.graph.calculators.pytensor_converter import ConverterNode
from ovmsx.graph.graph_config import GraphConfig

_MAX_HOPS = 8  # converters in a row worth following


def stream_ports(config: GraphConfig, nodes: Sequence[CalculatorNode]) -> tuple[dict, dict]:
    """(inputs, outputs): graph stream name -> port (name, datatype, shape()) or None."""
    inputs = {ref.name: _consumed(ref.name, nodes, _MAX_HOPS) for ref in config.input_streams}
    outputs = {ref.name: _produced(ref.name, nodes, _MAX_HOPS) for ref in config.output_streams}
    return inputs, outputs


def _consumed(stream: str, nodes: Sequence[CalculatorNode], hops: int) -> object | None:
    for node in nodes:
        for ref in node.node.inputs:
            if ref.name != stream:
                continue
            if isinstance(node, ConverterNode) and hops > 0:
                target = next(t for s, t, _ in node.pairs if s == ref.tag_index)
                out = next(o for o in node.node.outputs if o.tag_index == target)
                found = _consumed(out.name, nodes, hops - 1)
            else:
                found = node.input_port(ref.tag_index)
            if found is not None:
                return found
    return None


def _produced(stream: str, nodes: Sequence[CalculatorNode], hops: int) -> object | None:
    for node in nodes:
        for ref in node.node.outputs:
            if ref.name != stream:
                continue
            if isinstance(node, ConverterNode) and hops > 0:
                source = next(s for s, t, _ in node.pairs if t == ref.tag_index)
                into = next(i for i in node.node.inputs if i.tag_index == source)
                return _produced(into.name, nodes, hops - 1)
            return node.output_port(ref.tag_index)
    return None
