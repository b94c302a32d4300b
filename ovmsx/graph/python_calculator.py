"""Calculators written in Python: the contract a user class follows, and its adapter.

OVMS needs a rebuilt binary for a new calculator; ovmsx imports one. A user calculator is a
subclass of ``PythonCalculator`` registered under a name (``@register_calculator``), in a
module the graph's config lists (``calculator_modules``) or a package's ``ovmsx.calculators``
entry point. Its contract is declared, MediaPipe style, with class attributes:

    INPUTS / OUTPUTS                      stream tags the node may use ("TAG?" = optional)
    INPUT_SIDE_PACKETS / OUTPUT_SIDE_PACKETS   side packet tags, the same way

and checked against each node at graph load (``check_node`` may add its own checks by raising
``ValueError``). One instance is made per graph instance (per unary request, per stream) and
driven open → process* → close with a ``CalculatorContext``; ``self.options`` holds the node's
``mediapipe.PythonCalculatorOptions`` params and ``self.node_name`` its name.
"""

from __future__ import annotations

from types import MappingProxyType

from ovmsx.graph.calculator import Calculator, CalculatorNode, GraphLoad, UserCodeNode
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig, StreamRef

OPTIONS = "mediapipe.PythonCalculatorOptions"


class PythonCalculator(Calculator):
    """Base class of calculators written in Python (see the module docstring)."""

    INPUTS: tuple[str, ...] = ()
    OUTPUTS: tuple[str, ...] = ()
    INPUT_SIDE_PACKETS: tuple[str, ...] = ()
    OUTPUT_SIDE_PACKETS: tuple[str, ...] = ()

    options: MappingProxyType
    node_name: str

    @classmethod
    def check_node(cls, node: NodeConfig) -> None:
        """Extra load-time checks of a node using this calculator; raise ValueError to refuse."""


def _check_tags(node: NodeConfig, refs: tuple[StreamRef, ...], declared: tuple, what: str) -> None:
    required = {tag for tag in declared if not tag.endswith("?")}
    allowed = required | {tag[:-1] for tag in declared if tag.endswith("?")}
    used = {ref.tag for ref in refs}
    for tag in sorted(used - allowed):
        shown = ", ".join(sorted(allowed)) or "none"
        raise contract_error(node, f'{what} tag "{tag}" is not one it declares ({shown})')
    for tag in sorted(required - used):
        raise contract_error(node, f'the calculator requires the {what} tag "{tag}"')


class PythonCalculatorNode(UserCodeNode, CalculatorNode):
    """A node whose calculator is a user's ``PythonCalculator`` subclass."""

    def __init__(self, calculator: type[PythonCalculator], node: NodeConfig, load: GraphLoad):
        super().__init__(node, load)
        self.start_timing()
        self.calculator = calculator
        _check_tags(node, node.inputs, calculator.INPUTS, "input stream")
        _check_tags(node, node.outputs, calculator.OUTPUTS, "output stream")
        _check_tags(
            node, node.input_side_packets, calculator.INPUT_SIDE_PACKETS, "input side packet"
        )
        _check_tags(
            node, node.output_side_packets, calculator.OUTPUT_SIDE_PACKETS, "output side packet"
        )
        try:
            calculator.check_node(node)
        except ValueError as refused:
            raise contract_error(node, str(refused)) from None
        options = node.options.get(OPTIONS)
        self.options = MappingProxyType(dict(options.params) if options else {})
        self.optional_side_packets = frozenset(
            tag[:-1] for tag in calculator.INPUT_SIDE_PACKETS if tag.endswith("?")
        )

    def create(self) -> Calculator:
        instance = self.calculator()
        instance.options = self.options
        instance.node_name = self.node.name
        return instance


def factory_for(calculator: type[PythonCalculator]):
    """A node factory with the built-in calculators' signature ``(node, load)``."""

    def make(node: NodeConfig, load: GraphLoad) -> PythonCalculatorNode:
        return PythonCalculatorNode(calculator, node, load)

    make.__name__ = calculator.__name__
    return make
