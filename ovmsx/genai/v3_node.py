"""What the graph nodes of every ``/v3`` task (LLM, embeddings, rerank, ...) share: OVMS's load
checks on their options and names, and the calculator a KServe request to them meets."""

from __future__ import annotations

from ovmsx.graph.calculator import Calculator, CalculatorContext, GraphLoad, NodeFailure
from ovmsx.graph.graph_config import NodeConfig
from ovmsx.status import StatusCode, status_error


def checked_options(node: NodeConfig, load: GraphLoad, options_type: str, calculator: str):
    """The node's options of ``options_type``, after OVMS's checks: options present, a node
    name, and no other node of the same calculator with that name in the graph."""
    options = node.options.get(options_type)
    if options is None:
        raise status_error(StatusCode.LLM_NODE_MISSING_OPTIONS, f"node {node.label}")
    if not node.name:
        raise status_error(StatusCode.LLM_NODE_MISSING_NAME, f"node {node.label}")
    if load.graph is not None:
        twins = [
            other
            for other in load.graph.nodes
            if other.name == node.name and other.calculator.endswith(calculator)
        ]
        if len(twins) > 1:
            raise status_error(StatusCode.LLM_NODE_NAME_ALREADY_EXISTS, node.name)
    return options


class OnlyOverV3(Calculator):
    """What a ``/v3`` node does when a request reaches it through the graph scheduler (KServe):
    it says where to send the request instead."""

    def __init__(self, calculator: str, label: str, endpoints: str) -> None:
        self._message = (
            f"{calculator} {label} serves the OpenAI-compatible API: send requests to {endpoints}"
        )

    def process(self, context: CalculatorContext) -> None:
        # OVMS fails such a request as a precondition (HTTP 412, gRPC FAILED_PRECONDITION).
        raise NodeFailure(self._message, "FAILED_PRECONDITION")
