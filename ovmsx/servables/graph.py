"""A served graph (``mediapipe_config_list`` entry): its definition, state and load error.

Loading reads and validates the graph file, checks every node's contract, then runs user code
(handler import, ``initialize``) in a worker thread. A graph that fails stays listed,
unavailable, with its reason; the rest of the config still serves. Graphs have one version,
``1``, as in OVMS.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.graph.calculator import CalculatorNode
from ovmsx.graph.calculators import CALCULATORS
from ovmsx.graph.graph_config import StreamRef, parse_graph
from ovmsx.graph.graph_plan import GraphPlan, build_plan
from ovmsx.graph.graph_validation import validate_graph
from ovmsx.servables.model import parse_version
from ovmsx.servables.model_version import VersionState
from ovmsx.status import StatusCode, StatusError, status_error

log = logging.getLogger("ovmsx.graphs")

GRAPH_VERSION = 1
PYTHON_TENSOR_TAG = "OVMS_PY_TENSOR"
TENSOR_TAG = "OVTENSOR"
# Graph-side tags whose packet types ovmsx has no calculators for.
UNSUPPORTED_TAGS = ("REQUEST", "RESPONSE", "IMAGE", "TFLITE_TENSOR", "TFTENSOR", "TENSOR")


def stream_kind(ref: StreamRef) -> str:
    """How a graph input/output is (de)serialized: "python" (pyovms.Tensor rules) or
    "tensor" (untagged/OVTENSOR: a tensor of a known datatype)."""
    if ref.tag.startswith(PYTHON_TENSOR_TAG):
        return "python"
    if ref.tag.startswith(TENSOR_TAG):
        return "tensor"
    for prefix in UNSUPPORTED_TAGS:
        if ref.tag.startswith(prefix):
            raise status_error(
                StatusCode.NOT_IMPLEMENTED,
                f"graph stream {ref.tag}:{ref.name}: {prefix} packets are not supported; "
                f"use {PYTHON_TENSOR_TAG} or {TENSOR_TAG} tags",
            )
    return "tensor"


@dataclass
class Graph:
    name: str
    config: MediapipeConfig
    state: VersionState = VersionState.START
    error: StatusError | None = None
    plan: GraphPlan | None = None
    nodes: list[CalculatorNode] = field(default_factory=list)
    inputs: dict[str, str] = field(default_factory=dict)  # input name -> kind
    outputs: dict[str, str] = field(default_factory=dict)  # output name -> kind

    @property
    def available(self) -> bool:
        return self.state is VersionState.AVAILABLE

    def check_version(self, version: str) -> None:
        """Graphs answer to version "" / "0" (default) and "1"."""
        if parse_version(version) not in (0, GRAPH_VERSION):
            raise status_error(
                StatusCode.MODEL_VERSION_MISSING, f"{self.name}: graphs have version 1"
            )

    def serving_plan(self) -> GraphPlan:
        if self.state is VersionState.AVAILABLE and self.plan is not None:
            return self.plan
        if self.state in (VersionState.UNLOADING, VersionState.END):
            raise status_error(StatusCode.MEDIAPIPE_DEFINITION_NOT_LOADED_ANYMORE, self.name)
        details = self.name if self.error is None else f"{self.name}: {self.error.message}"
        raise status_error(StatusCode.MEDIAPIPE_DEFINITION_NOT_LOADED_YET, details)

    def load(self) -> None:
        """Read, check and start the definition (runs user code: call from a worker thread)."""
        path = self.config.graph_file
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise status_error(
                StatusCode.FILE_INVALID, f"graph {self.name}: {path}: {error}"
            ) from None
        config = parse_graph(text, str(path))
        validate_graph(config, CALCULATORS, str(path))
        self.inputs = {ref.name: stream_kind(ref) for ref in config.input_streams}
        self.outputs = {ref.name: stream_kind(ref) for ref in config.output_streams}
        nodes = [CALCULATORS[n.calculator](n, self.config.base_dir) for n in config.nodes]
        loaded: list[CalculatorNode] = []
        try:
            for node in nodes:
                node.load()
                loaded.append(node)
        except BaseException:
            # One node failing tears down the graph's resources, as in OVMS.
            _retire_all(loaded, self.name)
            raise
        self.nodes = nodes
        self.plan = build_plan(config, nodes)

    def retire(self) -> None:
        """Finalize every node (runs user code: call from a worker thread)."""
        _retire_all(self.nodes, self.name)
        self.nodes = []
        self.plan = None


def _retire_all(nodes: list[CalculatorNode], graph: str) -> None:
    for node in nodes:
        try:
            node.retire()
        except Exception:  # OVMS logs finalize errors and carries on unloading
            log.exception("graph %s node %s: finalize failed", graph, node.node.label)
