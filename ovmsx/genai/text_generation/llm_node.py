"""``HttpLLMCalculator``: the graph node that makes a graph an LLM servable on ``/v3``.

The node reads its ``LLMCalculatorOptions`` when the graph loads (OVMS's load errors: no
options, no name, a name two LLM nodes share, a models path that is not there), starts the
engine process in ``load`` and stops it in ``retire``, so reload and retirement work as for
any graph. Requests never run through the graph scheduler: the ``/v3`` frontend (v3_api.py)
finds the node of the graph the JSON ``model`` names and hands the request to its
``LLMServable``. A KServe request sent to such a graph gets an error saying where to send it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from ovmsx.genai.engine.engine_client import EngineClient
from ovmsx.genai.engine.engine_settings import EngineSettings
from ovmsx.genai.text_generation.chat_template import ChatTemplate
from ovmsx.genai.text_generation.llm_options import read_options
from ovmsx.genai.text_generation.llm_parsers import parser_options, servable_parsers
from ovmsx.genai.text_generation.llm_servable import LLMServable
from ovmsx.genai.v3_node import OnlyOverV3, checked_options
from ovmsx.graph.calculator import Calculator, CalculatorNode, GraphLoad
from ovmsx.graph.graph_config import NodeConfig
from ovmsx.log_format import LEVELS
from ovmsx.status import StatusCode, status_error

OPTIONS = "mediapipe.LLMCalculatorOptions"
CALCULATOR = "HttpLLMCalculator"


class LLMNode(CalculatorNode):
    # The server gives the node its servable; no request or node provides it.
    optional_side_packets = frozenset({"LLM_NODE_RESOURCES", "LLM_NODE_EXECUTION_CONTEXTS"})

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        options = checked_options(node, load, OPTIONS, "LLMCalculator")
        self.settings, self.limits = read_options(options, load.base_dir, node.name)
        self.parser_options = parser_options(options, node.name)
        self.servable: LLMServable | None = None

    @property
    def healthy(self) -> bool:
        return self.servable is not None and self.servable.engine.ready

    def load(self) -> None:
        servables = self.load_context.servables
        loop = getattr(servables, "loop", None)
        if loop is None:
            raise status_error(
                StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED,
                f"node {self.node.label}: LLM graphs run only inside the server",
            )
        settings = _with_server_logging(self.settings)
        engine = EngineClient(self.node.name, settings, loop)
        try:
            info = engine.start()
        except RuntimeError as error:
            raise status_error(
                StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED,
                f"node {self.node.label}: {settings.models_path}: {error}",
            ) from None
        path = Path(settings.models_path)
        folder = path if path.is_dir() else path.parent
        template = ChatTemplate(folder, info.chat_template, info.bos_token, info.eos_token)
        if not template.available:
            logging.getLogger("ovmsx.llm_calculator").warning(
                "Warning: Chat template has not been loaded properly. Servable will not "
                "respond to /chat/completions endpoint."
            )
        parsers = servable_parsers(self.parser_options, template.source, self.node.name)
        self.servable = LLMServable(engine, template, self.limits, info, parsers)

    def retire(self) -> None:
        servable, self.servable = self.servable, None
        if servable is not None:
            servable.close()

    def create(self) -> Calculator:
        endpoints = "/v3/chat/completions or /v3/completions"
        return OnlyOverV3(CALCULATOR, self.node.label, endpoints)


def _with_server_logging(settings: EngineSettings) -> EngineSettings:
    """The engine process logs at the server's level, to the same file."""
    root = logging.getLogger()
    level = next((name for name, value in LEVELS.items() if value == root.level), "INFO")
    path = next(
        (
            handler.baseFilename
            for handler in root.handlers
            if isinstance(handler, logging.FileHandler)
        ),
        None,
    )
    return replace(settings, log_level=level, log_path=path)
