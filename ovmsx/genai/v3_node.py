"""What the graph nodes of the ``/v3`` servables (LLM, embeddings, rerank) share: OVMS's load
checks on their options and names, and the calculator a KServe request to them meets."""

from __future__ import annotations

from pathlib import Path

from ovmsx.genai.llm_options import resolve_models_path
from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
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


def encoder_folder(text: str, base_dir: Path, node: str) -> Path:
    """An encoder's ``models_path`` resolved against the graph's folder: it must be a folder."""
    path = resolve_models_path(text, base_dir, node)
    if not path.is_dir():
        raise status_error(
            StatusCode.LLM_NODE_DIRECTORY_DOES_NOT_EXIST, f"node {node}: {path} is not a folder"
        )
    return path


class EncoderNode(CalculatorNode):
    """An embeddings or rerank node: ``load`` builds its servable (``make_servable``) from
    ``settings``, ``retire`` closes it, a KServe request is told to use ``endpoints``."""

    calculator = ""
    endpoints = ""

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        self.settings = None
        self.servable = None

    def make_servable(self):
        raise NotImplementedError

    def load(self) -> None:
        from ovmsx.genai.encoder_model import EncoderLoadError

        try:
            self.servable = self.make_servable()
        except EncoderLoadError as error:
            raise status_error(
                StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED,
                f"node {self.node.label}: {self.settings.models_path}: {error}",
            ) from None

    def retire(self) -> None:
        servable, self.servable = self.servable, None
        if servable is not None:
            servable.close()

    def create(self) -> Calculator:
        return OnlyOverV3(self.calculator, self.node.label, self.endpoints)
