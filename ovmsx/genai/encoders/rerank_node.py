"""``RerankCalculatorOV``: the graph node that makes a graph a ``/v3/rerank`` servable, loaded,
reloaded and retired as the embeddings node is (embeddings_node.py)."""

from __future__ import annotations

from ovmsx.genai.encoders.encoder_node import EncoderNode, encoder_folder
from ovmsx.genai.encoders.rerank_servable import RerankServable, RerankSettings
from ovmsx.genai.node_options import parse_plugin_config
from ovmsx.genai.v3_node import checked_options
from ovmsx.graph.calculator import GraphLoad
from ovmsx.graph.graph_config import NodeConfig
from ovmsx.status import StatusCode, status_error

OPTIONS = "mediapipe.RerankCalculatorOVOptions"
CALCULATOR = "RerankCalculatorOV"
ENDPOINTS = "/v3/rerank"


class RerankNode(EncoderNode):
    calculator = CALCULATOR
    endpoints = ENDPOINTS
    # The server gives the node its servable; no request or node provides it.
    optional_side_packets = frozenset({"RERANK_NODE_RESOURCES"})

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        options = checked_options(node, load, OPTIONS, CALCULATOR)
        lengths = [
            getattr(options, name)
            for name in ("max_length", "max_position_embeddings")
            if options.HasField(name)
        ]
        if len(lengths) > 1:
            raise status_error(
                StatusCode.MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID,
                f"node {node.name}: max_length and max_position_embeddings name the same "
                "setting; set one",
            )
        self.settings = RerankSettings(
            models_path=encoder_folder(options.models_path, load.base_dir, node.name),
            device=options.target_device or "CPU",
            plugin_config=parse_plugin_config(options.plugin_config, node.name),
            max_allowed_chunks=options.max_allowed_chunks,
            max_length=lengths[0] if lengths else None,
        )

    def make_servable(self) -> RerankServable:
        return RerankServable(self.settings, self.node.name)
