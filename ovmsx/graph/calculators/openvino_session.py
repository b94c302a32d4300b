"""OpenVINOModelServerSessionCalculator: binds a model or pipeline of the server to a graph.

It takes no streams and publishes the ``SESSION`` side packet, which OpenVINOInference nodes
read. As in OVMS (COMPAT §12.1): ``servable_version`` is parsed leniently (spaces dropped;
anything not a uint32 means 0, the default version, re-resolved at every inference); the
servable is looked up when a graph instance opens, and a missing one fails that request with
MEDIAPIPE_PRECONDITION_FAILED ("... failed to load the model"); ``service_url`` and
``server_config`` are accepted and ignored (they matter only outside a server).
"""

from __future__ import annotations

from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
)
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig
from ovmsx.status import StatusError

OPTIONS = "mediapipe.OpenVINOModelServerSessionCalculatorOptions"
SESSION_TAG = "SESSION"
_UINT32_MAX = 2**32 - 1


def parse_servable_version(text: str) -> int:
    """OVMS's ``stou32``: spaces removed; a sign, a non-number or > uint32 → 0 (default)."""
    digits = text.replace(" ", "")
    if not digits.isdigit() or not digits.isascii():
        return 0
    value = int(digits)
    return value if value <= _UINT32_MAX else 0


class SessionNode(CalculatorNode):
    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        options = node.options.get(OPTIONS)
        if options is None or not options.servable_name:
            raise contract_error(node, "servable_name is required in its options")
        if node.inputs or node.outputs:
            raise contract_error(node, "it takes no input or output streams")
        if [ref.tag for ref in node.output_side_packets] != [SESSION_TAG]:
            raise contract_error(
                node, f'it needs exactly one output_side_packet "{SESSION_TAG}:<name>"'
            )
        self.servable_name: str = options.servable_name
        self.version = parse_servable_version(options.servable_version)

    def create(self) -> Calculator:
        return SessionCalculator(self)

    may_run_on_loop = True
    single_timestamp = True

    def ports(self) -> tuple[dict, dict] | None:
        """The servable's (inputs, outputs) by name, as it is now; None if unknown."""
        servables = self.load_context.servables
        if servables is None:
            return None
        try:
            return servables.ports(self.servable_name, self.version)
        except StatusError:
            return None


class SessionCalculator(Calculator):
    __slots__ = ("_node",)

    def __init__(self, node: SessionNode) -> None:
        self._node = node

    def open(self, context: CalculatorContext) -> None:
        node = self._node
        servables = node.load_context.servables
        try:
            if servables is None:
                raise NodeFailure("no server to take servables from", "FAILED_PRECONDITION")
            session = servables.session(node.servable_name, node.version)
        except StatusError as error:
            raise NodeFailure(
                "OpenVINOModelServerSessionCalculator failed to load the model "
                f"({node.servable_name}: {error.message})",
                "FAILED_PRECONDITION",
            ) from None
        context.set_side_packet(SESSION_TAG, session)

    def process(self, context: CalculatorContext) -> None:
        """Never called: the node has no input streams."""
