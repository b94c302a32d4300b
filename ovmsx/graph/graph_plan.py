"""The wiring of a loaded graph, worked out once so that each graph instance starts cheaply."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ovmsx.graph.calculator import CalculatorNode
from ovmsx.graph.graph_config import GraphConfig
from ovmsx.graph.graph_validation import topological_order
from ovmsx.graph.input_policies import POLICIES
from ovmsx.in_flight import InFlight


@dataclass(frozen=True)
class NodePlan:
    label: str
    calculator: CalculatorNode
    inputs: tuple[tuple[str, str, bool], ...]  # (tag_index, stream, back edge)
    outputs: tuple[tuple[str, str], ...]  # (tag_index, stream)
    policy: str
    sync_sets: tuple[frozenset[str], ...]
    side_inputs: tuple[tuple[str, str], ...] = ()  # (tag_index, side packet name)
    side_outputs: Mapping[str, str] = field(default_factory=dict)  # tag_index -> side packet


@dataclass(frozen=True)
class GraphPlan:
    nodes: tuple[NodePlan, ...]  # upstream first
    input_streams: tuple[str, ...]
    output_streams: tuple[str, ...]
    # The graph instances running on this plan (unary runs and streams): a retired graph
    # finalizes its nodes once they have all ended.
    in_flight: InFlight = field(default_factory=InFlight, compare=False, repr=False)


def build_plan(config: GraphConfig, calculators: Sequence[CalculatorNode]) -> GraphPlan:
    """``calculators[i]`` runs ``config.nodes[i]``; the graph has passed validation."""
    nodes = []
    for index in topological_order(config):
        node = config.nodes[index]
        # A calculator that needs one handler overrides the node's and graph's choice.
        policy = calculators[index].input_policy or node.input_stream_handler
        if policy not in POLICIES:
            raise ValueError(f"unknown input stream handler {policy}")
        nodes.append(
            NodePlan(
                label=node.label,
                calculator=calculators[index],
                inputs=tuple(
                    (ref.tag_index, ref.name, ref.tag_index in node.back_edges)
                    for ref in node.inputs
                ),
                outputs=tuple((ref.tag_index, ref.name) for ref in node.outputs),
                policy=policy,
                sync_sets=node.sync_sets,
                side_inputs=tuple((ref.tag_index, ref.name) for ref in node.input_side_packets),
                side_outputs=MappingProxyType(
                    {ref.tag_index: ref.name for ref in node.output_side_packets}
                ),
            )
        )
    return GraphPlan(
        nodes=tuple(nodes),
        input_streams=tuple(ref.name for ref in config.input_streams),
        output_streams=tuple(ref.name for ref in config.output_streams),
    )
