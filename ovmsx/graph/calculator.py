"""What a calculator is, as the scheduler sees it.

A graph definition holds one ``CalculatorNode`` per node: made when the graph loads, shared by
every running instance of the graph (a Python node's handler object lives here). Each graph
instance asks every node for a fresh ``Calculator`` and drives it open → process* → close.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ovmsx.graph.graph_config import NodeConfig


class NodeFailure(Exception):
    """A calculator refused its input or its own code failed; the graph instance stops.

    ``code`` is the absl-style status name MediaPipe would report (INTERNAL,
    RESOURCE_EXHAUSTED, INVALID_ARGUMENT ...); the message says what went wrong.
    """

    def __init__(self, message: str, code: str = "INTERNAL") -> None:
        super().__init__(message)
        self.code = code


class CalculatorContext:
    """One call into a calculator: the packets present at ``timestamp`` and a way to emit."""

    __slots__ = ("emitted", "graph_state", "inputs", "side_packets", "timestamp")

    def __init__(
        self,
        timestamp: int,
        inputs: dict[str, object],
        side_packets: Mapping[str, object],
        graph_state: dict,
    ) -> None:
        self.timestamp = timestamp
        self.inputs = inputs  # tag_index -> value, only the streams holding a packet now
        self.side_packets = side_packets
        self.graph_state = graph_state  # this node's private dict for this graph instance
        self.emitted: list[tuple[str, object, int]] = []

    def emit(self, tag_index: str, value: object, timestamp: int | None = None) -> None:
        """Send ``value`` on the output stream ``tag_index`` (default: at the input's time)."""
        self.emitted.append((tag_index, value, self.timestamp if timestamp is None else timestamp))


class Calculator:
    """One node in one graph instance. Calls never overlap, and timestamps only grow."""

    def open(self, context: CalculatorContext) -> None:
        """Called once, before the first ``process``."""

    def process(self, context: CalculatorContext) -> None:
        raise NotImplementedError

    def close(self, context: CalculatorContext) -> None:
        """Called once when every input stream is done (or the instance ends)."""


class CalculatorNode:
    """A node of a loaded graph definition; ``create`` makes its per-instance Calculator.

    The constructor checks the node's contract (its streams and options) and must not run
    user code; ``load`` may (it runs in a worker thread); ``retire`` undoes ``load``.
    """

    def __init__(self, node: NodeConfig, base_dir: Path) -> None:
        self.node = node
        self.base_dir = base_dir

    def load(self) -> None:
        """Acquire what every instance shares (import a handler, ...)."""

    def create(self) -> Calculator:
        raise NotImplementedError

    def retire(self) -> None:
        """Release what ``load`` acquired; errors are logged by the caller, never raised on."""
