"""What a calculator is, as the scheduler sees it.

A graph definition holds one ``CalculatorNode`` per node: made when the graph loads, shared by
every running instance of the graph (a Python node's handler object lives here). Each graph
instance asks every node for a fresh ``Calculator`` and drives it open → process* → close.

Streams and side packets are addressed by ``"TAG:INDEX"`` strings (``":0"`` for the first
untagged one), as ``StreamRef.tag_index`` spells them; ``CalculatorContext`` also offers
MediaPipe-style ``input(tag, index)`` / ``output(tag, value, index)`` helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ovmsx.call_timer import CallTimer
from ovmsx.graph.graph_config import GraphConfig, NodeConfig


class NodeFailure(Exception):
    """A calculator refused its input or its own code failed; the graph instance stops.

    ``code`` is the absl-style status name MediaPipe would report (INTERNAL,
    RESOURCE_EXHAUSTED, INVALID_ARGUMENT, FAILED_PRECONDITION ...); the message says what went
    wrong. FAILED_PRECONDITION becomes OVMS's MEDIAPIPE_PRECONDITION_FAILED, anything else
    MEDIAPIPE_EXECUTION_ERROR.
    """

    def __init__(self, message: str, code: str = "INTERNAL") -> None:
        super().__init__(message)
        self.code = code


def tag_index(tag: str, index: int = 0) -> str:
    """The key of stream ``tag`` number ``index`` (``tag_index("IMAGE")`` is ``"IMAGE:0"``)."""
    return f"{tag}:{index}"


class CalculatorContext:
    """One call into a calculator: the packets present at ``timestamp`` and a way to emit.

    ``side_packets`` holds the node's input side packets by ``"TAG:INDEX"``; in ``open`` a
    node sets its output side packets with ``set_side_packet``.
    """

    __slots__ = (
        "bounds",
        "emitted",
        "graph_state",
        "inputs",
        "side_outputs",
        "side_packets",
        "timestamp",
    )

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
        self.bounds: list[tuple[str, int]] = []
        self.side_outputs: dict[str, object] = {}

    def emit(self, tag_index: str, value: object, timestamp: int | None = None) -> None:
        """Send ``value`` on the output stream ``tag_index`` (default: at the input's time)."""
        self.emitted.append((tag_index, value, self.timestamp if timestamp is None else timestamp))

    def set_bound(self, tag_index: str, bound: int) -> None:
        """Promise that no packet below ``bound`` will come on output ``tag_index`` (MediaPipe's
        SetNextTimestampBound). Only nodes with ``own_bounds`` need it: the scheduler moves
        the other nodes' bounds itself."""
        self.bounds.append((tag_index, bound))

    # MediaPipe-style spellings, for calculators written by users.

    def input(self, tag: str, index: int = 0) -> object | None:
        """The packet on input ``tag`` (number ``index``) at this timestamp, or None."""
        return self.inputs.get(tag_index(tag, index))

    def output(self, tag: str, value: object, index: int = 0, timestamp: int | None = None) -> None:
        """Send ``value`` on output ``tag`` (number ``index``)."""
        self.emit(tag_index(tag, index), value, timestamp)

    def side_packet(self, tag: str, index: int = 0) -> object | None:
        """The input side packet ``tag`` (number ``index``), or None when it was not given."""
        return self.side_packets.get(tag_index(tag, index))

    def set_side_packet(self, tag: str, value: object, index: int = 0) -> None:
        """Publish output side packet ``tag`` (call it from ``open``)."""
        self.side_outputs[tag_index(tag, index)] = value


class Calculator:
    """One node in one graph instance. Calls never overlap, and timestamps only grow."""

    def open(self, context: CalculatorContext) -> None:
        """Called once, before the first ``process``; output side packets are set here."""

    def process(self, context: CalculatorContext) -> None:
        raise NotImplementedError

    def close(self, context: CalculatorContext) -> None:
        """Called once when every input stream is done (or the instance ends)."""


class ServableSession(Protocol):
    """A model or pipeline as an inference calculator sees it (see servables/graph_sessions)."""

    name: str

    def infer(self, inputs: Mapping[str, object]) -> dict[str, object]:
        """Run the servable on named Tensors, blocking the calling (worker) thread; raises
        ``StatusError`` for what it refuses."""
        ...

    async def infer_async(self, inputs: Mapping[str, object]) -> dict[str, object]:
        """The same, awaited on the event loop."""
        ...


class ServableResolver(Protocol):
    def session(self, name: str, version: int) -> ServableSession:
        """The servable ``name`` (version 0 = default, re-resolved at every inference), or
        ``StatusError`` when there is none that can serve."""
        ...

    def ports(self, name: str, version: int) -> tuple[dict, dict] | None:
        """(inputs, outputs) by name, ``PortSpec``-like (name, datatype, shape()), or None."""
        ...


@dataclass(frozen=True)
class GraphLoad:
    """What a node may look at while the graph loads."""

    base_dir: Path
    """The graph's folder: relative paths in options start here."""
    graph: GraphConfig | None = None
    """The whole graph, for nodes that follow their side packets to the node producing them."""
    servables: ServableResolver | None = None
    """The server's models and pipelines (None where a graph runs without a server)."""


# A user-code call (a Python node's execute, a Python calculator's process) the event loop may
# make itself once calls average less than this: a hand-off to a worker thread costs more
# (measured with bench/bench_graphs_openvino.py). The first calls always run on a worker.
USER_CODE_INLINE_BUDGET_S = 100e-6


class UserCodeNode:
    """Mixin for nodes running user code: on the loop only while measured quick."""

    timer: CallTimer

    def start_timing(self) -> None:
        self.timer = CallTimer(USER_CODE_INLINE_BUDGET_S, f"node {self.node.label}")

    @property
    def may_run_on_loop(self) -> bool:
        return self.timer.quick


class CalculatorNode:
    """A node of a loaded graph definition; ``create`` makes its per-instance Calculator.

    The constructor checks the node's contract (its streams and options) and must not run
    user code; ``load`` may (it runs in a worker thread); ``retire`` undoes ``load``.
    """

    # Whether instances may run on the event loop's thread now: nodes that never block it
    # (no user code; inference awaited through ``process_async``), and user-code nodes whose
    # calls have proven quick (``timer``).
    may_run_on_loop: bool = False
    # Whether the node only ever emits at the timestamp it processes and runs once per
    # timestamp, so a unary request can run it in one pass (see single_pass.py).
    single_timestamp: bool = False
    # For nodes running user code: how long their Process calls take. The
    # scheduler feeds it; the node reads it to decide ``may_run_on_loop``.
    timer: CallTimer | None = None
    # Input side packet tags the node can do without (MediaPipe's Optional()): a graph
    # instance starts even when nothing provides them.
    optional_side_packets: frozenset[str] = frozenset()
    # The input stream handler the calculator needs whatever the graph says (MediaPipe lets a
    # calculator's contract force one, e.g. FlowLimiterCalculator the immediate one); None
    # takes the node's or graph's.
    input_policy: str | None = None
    # Whether the node moves its output bounds itself (``CalculatorContext.set_bound``), as
    # MediaPipe calculators that process timestamp bounds without an offset do: the scheduler
    # then does not advance its outputs past each processed timestamp nor pass its input
    # bounds on, which would forbid packets it still means to send at earlier timestamps
    # (a queued frame, a loop item). Closing still closes its outputs.
    own_bounds: bool = False
    # For single_timestamp nodes whose calculators need no open or close and read no side
    # packets: ``call_once(present) -> [(tag_index, value)]`` runs the node for one timestamp
    # with the inputs present (by tag_index), outside a graph instance, raising as ``process``
    # would. A graph of that node alone then runs without the calculator protocol
    # (single_pass.OneNodePass).
    call_once: Callable[[dict[str, object]], list[tuple[str, object]]] | None = None

    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        self.node = node
        self.load_context = load

    @property
    def base_dir(self) -> Path:
        return self.load_context.base_dir

    @property
    def healthy(self) -> bool:
        """Whether the node can serve now (False while an LLM engine restarts)."""
        return True

    def load(self) -> None:
        """Acquire what every instance shares (import a handler, ...)."""

    def create(self) -> Calculator:
        raise NotImplementedError

    def retire(self) -> None:
        """Release what ``load`` acquired; errors are logged by the caller, never raised on."""

    def input_port(self, tag_index: str) -> object | None:
        """What the node knows of the tensors it takes on ``tag_index`` (name, datatype,
        shape()), for graph metadata; None when it does not know."""
        return None

    def output_port(self, tag_index: str) -> object | None:
        """Like ``input_port``, for an output stream."""
        return None
