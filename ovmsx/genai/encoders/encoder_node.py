"""What the embeddings and rerank graph nodes share: a folder for ``models_path``, a servable
built at load and closed at retirement, and KServe requests told to use ``/v3``."""

from __future__ import annotations

from pathlib import Path

from ovmsx.genai.node_options import resolve_models_path
from ovmsx.genai.v3_node import OnlyOverV3
from ovmsx.graph.calculator import Calculator, CalculatorNode, GraphLoad
from ovmsx.graph.graph_config import NodeConfig
from ovmsx.status import StatusCode, status_error


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
        from ovmsx.genai.encoders.encoder_model import EncoderLoadError

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
