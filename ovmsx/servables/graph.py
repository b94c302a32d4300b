"""A served graph (``mediapipe_config_list`` entry): its definition, state and load error.

Loading reads and validates the graph file, imports the config's calculator modules, checks
every node's contract, then runs user code (handler import, ``initialize``) in a worker
thread. A graph that fails stays listed, unavailable, with its reason; the rest of the config
still serves. Graphs have one version, ``1``, as in OVMS.

A reload builds a new ``Graph`` beside the one serving and swaps them; the old one finalizes its
nodes once the graph instances running on its plan (unary runs and streams) have ended.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.graph.calculator import CalculatorNode, GraphLoad, ServableResolver
from ovmsx.graph.calculator_registry import import_modules, known_names, lookup
from ovmsx.graph.graph_config import GraphConfig, parse_graph
from ovmsx.graph.graph_plan import GraphPlan, build_plan
from ovmsx.graph.graph_validation import validate_graph
from ovmsx.servables.graph_execution import UnaryRunner
from ovmsx.servables.graph_metadata import stream_ports
from ovmsx.servables.graph_packets import StreamKind, stream_kind
from ovmsx.servables.model import parse_version
from ovmsx.servables.model_version import FAILED_PRECONDITION, OK, VersionState
from ovmsx.status import StatusCode, StatusError, status_error

log = logging.getLogger("ovmsx.graphs")

GRAPH_VERSION = 1


class _KnownCalculators:
    """``name in known`` looks the registry up (entry points included); iterating lists it."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and lookup(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(known_names())


def _check_passthrough(config: GraphConfig) -> None:
    """OVMS's rules for graphs taking the whole request or answering the whole response."""
    takes_request = any(stream_kind(r) is StreamKind.REQUEST for r in config.input_streams)
    gives_response = any(stream_kind(r) is StreamKind.RESPONSE for r in config.output_streams)
    if takes_request and not gives_response:
        raise status_error(StatusCode.MEDIAPIPE_KFS_PASSTHROUGH_MISSING_OUTPUT_RESPONSE_TAG)
    if gives_response and not takes_request:
        raise status_error(StatusCode.MEDIAPIPE_KFS_PASSTHROUGH_MISSING_INPUT_REQUEST_TAG)
    if takes_request and len(config.output_streams) != 1:
        raise status_error(StatusCode.MEDIAPIPE_KFS_PASS_WRONG_OUTPUT_STREAM_COUNT)
    if takes_request and len(config.input_streams) != 1:
        raise status_error(StatusCode.MEDIAPIPE_KFS_PASS_WRONG_INPUT_STREAM_COUNT)


@dataclass
class Graph:
    name: str
    config: MediapipeConfig
    state: VersionState = VersionState.START
    error: StatusError | None = None
    plan: GraphPlan | None = None
    runner: UnaryRunner | None = None
    graph_config: GraphConfig | None = None
    nodes: list[CalculatorNode] = field(default_factory=list)
    inputs: dict[str, StreamKind] = field(default_factory=dict)  # input name -> kind
    outputs: dict[str, StreamKind] = field(default_factory=dict)  # output name -> kind
    passthrough: bool = False
    """Takes the whole KServe request and answers with a whole response."""
    tensor_inputs: bool = False
    """Every input is an OVMS_PY_TENSOR stream: a request's raw inputs are its packets as they
    are (``kserve_graph.raw_graph_inputs``)."""
    fingerprint: str = ""
    """What its files held when it was loaded (``graph_files.fingerprint``): a change reloads it."""

    @property
    def available(self) -> bool:
        """Loaded, and every node able to serve (an LLM node's engine may be restarting)."""
        return self.state is VersionState.AVAILABLE and all(node.healthy for node in self.nodes)

    @property
    def error_code(self) -> str:
        """OVMS reports a graph that failed validation as FAILED_PRECONDITION."""
        return FAILED_PRECONDITION if self.error is not None else OK

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

    def load(self, servables: ServableResolver | None = None) -> None:
        """Read, check and start the definition (runs user code: call from a worker thread)."""
        path = self.config.graph_file
        text = self.config.graph_text
        try:
            if text is None:
                text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise status_error(
                StatusCode.FILE_INVALID, f"graph {self.name}: {path}: {error}"
            ) from None
        config = parse_graph(text, str(path))
        import_modules(self.config.calculator_modules or (), self.config.base_dir, self.name)
        validate_graph(config, _KnownCalculators(), str(path))
        self.inputs = {ref.name: stream_kind(ref) for ref in config.input_streams}
        self.outputs = {ref.name: stream_kind(ref) for ref in config.output_streams}
        _check_passthrough(config)
        self.passthrough = StreamKind.REQUEST in self.inputs.values()
        self.tensor_inputs = all(kind is StreamKind.PYTHON for kind in self.inputs.values())
        context = GraphLoad(self.config.base_dir, config, servables)
        nodes = [lookup(node.calculator)(node, context) for node in config.nodes]
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
        self.graph_config = config
        self.plan = build_plan(config, nodes)
        self.runner = UnaryRunner(self.plan, nodes)

    def ports(self) -> tuple[dict, dict]:
        """(inputs, outputs): stream name -> what the graph knows of its tensors, or None."""
        if self.graph_config is None:
            return {}, {}
        return stream_ports(self.graph_config, self.nodes)

    def retire(self) -> None:
        """Finalize every node, once (runs user code: call from a worker thread)."""
        nodes, self.nodes = self.nodes, []
        self.plan = None
        _retire_all(nodes, self.name)


def _retire_all(nodes: list[CalculatorNode], graph: str) -> None:
    for node in nodes:
        try:
            node.retire()
        except Exception:  # OVMS logs finalize errors and carries on unloading
            log.exception("graph %s node %s: finalize failed", graph, node.node.label)
