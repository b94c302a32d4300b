"""``EmbeddingsCalculatorOV``: the graph node that makes a graph a ``/v3/embeddings`` servable.

Its ``EmbeddingsCalculatorOVOptions`` are read when the graph loads (OVMS's checks, shared with
the LLM node); ``load`` compiles the model and starts its worker, ``retire`` stops it, so reload
and retirement work as for any graph. Requests reach the servable from the ``/v3`` frontend.
"""

from __future__ import annotations

from ovmsx.genai.encoders.embeddings_servable import EmbeddingsServable, EmbeddingsSettings
from ovmsx.genai.encoders.encoder_node import EncoderNode, encoder_folder
from ovmsx.genai.node_options import parse_plugin_config
from ovmsx.genai.v3_node import checked_options
from ovmsx.graph.calculator import GraphLoad
from ovmsx.graph.graph_config import NodeConfig
from ovmsx.status import StatusCode, status_error

OPTIONS = "mediapipe.EmbeddingsCalculatorOVOptions"
CALCULATOR = "EmbeddingsCalculatorOV"
ENDPOINTS = "/v3/embeddings"


class EmbeddingsNode(EncoderNode):
    calculator = CALCULATOR
    endpoints = ENDPOINTS
    # The server gives the node its servable; no request or node provides it.
    optional_side_packets = frozenset({"EMBEDDINGS_NODE_RESOURCES"})

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        options = checked_options(node, load, OPTIONS, CALCULATOR)
        if options.HasField("max_length") and options.max_length == 0:
            raise status_error(
                StatusCode.MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID,
                f"node {node.name}: max_length must be greater than 0",
            )
        pooling = options.Pooling.Name(options.pooling) if options.HasField("pooling") else None
        self.settings = EmbeddingsSettings(
            models_path=encoder_folder(options.models_path, load.base_dir, node.name),
            device=options.target_device or "CPU",
            plugin_config=parse_plugin_config(options.plugin_config, node.name),
            normalize=options.normalize_embeddings,
            pooling="LAST" if pooling == "LAST_TOKEN" else pooling,
            truncate=options.truncate,
            max_length=options.max_length if options.HasField("max_length") else None,
        )

    def make_servable(self) -> EmbeddingsServable:
        return EmbeddingsServable(self.settings, self.node.name)
