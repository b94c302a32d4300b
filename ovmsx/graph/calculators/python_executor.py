"""PythonExecutorCalculator: runs an OVMS ``OvmsPythonModel`` handler as a graph node.

Behaviour follows OVMS (see docs/python_nodes.md):
- the handler is loaded once per node when the graph loads; one model object serves every
  graph instance; ``finalize()`` runs when the graph is retired;
- ``execute`` gets the present inputs sorted by tag (LOOPBACK left out) and returns a list of
  Tensors (regular mode) or a generator of such lists (generative mode, driven through the
  LOOPBACK back edge: one item per Process call, timestamp + 1 per item);
- each output Tensor goes to the output stream of the same name; returning only some of the
  outputs is allowed.
Beyond OVMS: ``execute(self, inputs, graph_state)`` receives a dict private to the node in one
graph instance (one stream, or one unary request).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from ovmsx import _core
from ovmsx.graph.calculator import (
    Calculator,
    CalculatorContext,
    CalculatorNode,
    GraphLoad,
    NodeFailure,
    UserCodeNode,
)
from ovmsx.graph.graph_config import NodeConfig
from ovmsx.graph.python_handler import create_model, import_handler, takes_graph_state
from ovmsx.status import StatusCode, status_error

log = logging.getLogger("ovmsx.graph")

OPTIONS = "mediapipe.PythonExecutorCalculatorOptions"
RESOURCES_TAG = "PYTHON_NODE_RESOURCES"
LOOPBACK = "LOOPBACK"
EXECUTION_ERROR = "Error occurred during graph execution"


def _contract_error(node: NodeConfig, problem: str):
    return status_error(
        StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR, f"node {node.label}: {problem}"
    )


class PythonExecutorNode(UserCodeNode, CalculatorNode):
    def __init__(self, node: NodeConfig, load: GraphLoad) -> None:
        super().__init__(node, load)
        self.start_timing()
        options = node.options.get(OPTIONS)
        if options is None:
            raise status_error(StatusCode.PYTHON_NODE_MISSING_OPTIONS, f"node {node.label}")
        if not node.name:
            raise status_error(StatusCode.PYTHON_NODE_MISSING_NAME, f"node {node.label}")
        in_tags = [ref.tag for ref in node.inputs]
        out_tags = [ref.tag for ref in node.outputs]
        if not in_tags or not out_tags:
            raise _contract_error(node, "a Python node needs at least one input and one output")
        if (LOOPBACK in in_tags) != (LOOPBACK in out_tags):
            raise _contract_error(
                node, "If LOOPBACK is used, it must be defined on both input and output of the node"
            )
        for side, tags in (("input", in_tags), ("output", out_tags)):
            if len(set(tags)) != len(tags):
                raise _contract_error(
                    node, f"two {side} streams share a tag; give each stream its own tag"
                )
        if RESOURCES_TAG not in {ref.tag for ref in node.input_side_packets}:
            raise _contract_error(
                node, f'missing input_side_packet: "{RESOURCES_TAG}:py" (required in OVMS)'
            )
        handler = options.handler_path.replace("\\", "/")
        path = Path(handler)
        self.handler_path = path if path.is_absolute() else self.base_dir / path
        if not self.handler_path.is_file():
            raise status_error(
                StatusCode.PYTHON_NODE_FILE_DOES_NOT_EXIST,
                f"node {node.label}: {self.handler_path}",
            )
        # Inputs in tag order, as OVMS passes them; LOOPBACK only triggers the generator.
        self.input_tags = sorted(
            (ref.tag, ref.tag_index) for ref in node.inputs if ref.tag != LOOPBACK
        )
        self.output_tags = {ref.name: ref.tag_index for ref in node.outputs if ref.tag != LOOPBACK}
        self.loopback = next((ref.tag_index for ref in node.outputs if ref.tag == LOOPBACK), None)
        # Without LOOPBACK a node answers each input at its own timestamp, once.
        self.single_timestamp = self.loopback is None
        self.model: object | None = None
        self.pass_state = False

    def load(self) -> None:
        model_class = import_handler(self.handler_path, self.node.name)
        arguments = {
            "node_name": self.node.name,
            "input_names": [ref.name for ref in self.node.inputs],
            "output_names": [ref.name for ref in self.node.outputs],
            "base_path": str(self.handler_path.parent),
        }
        self.model = create_model(model_class, self.handler_path, self.node.name, arguments)
        self.pass_state = takes_graph_state(self.model)

    def create(self) -> Calculator:
        return PythonExecutor(self)

    def call_once(self, present: dict[str, object]) -> list[tuple[str, object]]:
        """One unary call outside a graph instance (single_pass.OneNodePass): the handler's
        outputs as (tag_index, Tensor), or NodeFailure as ``process`` would raise it. Only for
        nodes without LOOPBACK (``single_timestamp``): a list is the only valid answer."""
        inputs = self.inputs_of(present)
        check_tensors(inputs)
        result = self.execute(inputs, {})
        if not isinstance(result, list):
            self.refuse_answer(result)
        return self.outputs_of(result)

    def inputs_of(self, present: dict[str, object]) -> list:
        """The present inputs in tag order, as the handler gets them (LOOPBACK left out)."""
        return [present[tag] for _, tag in self.input_tags if present.get(tag) is not None]

    def execute(self, inputs: list, graph_state: dict) -> object:
        """The handler's ``execute``; its exception as the node's failure."""
        model = self.model
        try:
            if self.pass_state:
                return model.execute(inputs, graph_state)
            return model.execute(inputs)
        except Exception as error:
            log.error("node %s: execute raised", self.node.name, exc_info=error)
            raise NodeFailure(f"{EXECUTION_ERROR} ({_type_name(error)}: {error})") from error

    def refuse_answer(self, result: object) -> NoReturn:
        """The failure for what ``execute`` returned when it is not a list."""
        if isinstance(result, Iterator) and self.loopback is None:
            raise NodeFailure(
                "Bad python node configuration. Execute yielded, but LOOPBACK is not "
                "defined in the node"
            )
        raise NodeFailure(
            "Unexpected Python object type. Expected: list or generator. "
            f"Received: {_type_name(result)}"
        )

    def outputs_of(self, outputs: list) -> list[tuple[str, object]]:
        """(tag_index, Tensor) for each Tensor of a list the handler returned, in order (each
        goes to the output stream of its name); NodeFailure at the first that is wrong. (A
        failed call's packets are dropped whole, so nothing is emitted before the check.)"""
        by_name = self.output_tags
        emitted = []
        for tensor in outputs:
            check_tensors((tensor,))
            tag = by_name.get(tensor.name)
            if tag is None:
                raise NodeFailure(
                    f"Unexpected Tensor found in the outputs. Tensor name: {tensor.name} is not "
                    "a valid node output"
                )
            emitted.append((tag, tensor))
        return emitted

    def retire(self) -> None:
        finalize = getattr(self.model, "finalize", None)
        self.model = None
        if finalize is not None:
            finalize()


def _type_name(value: object) -> str:
    return type(value).__name__


def check_tensors(values) -> None:
    for value in values:
        if not isinstance(value, _core.Tensor):
            raise NodeFailure(
                f"Unexpected Python object type. Expected: Tensor. Received: {_type_name(value)}"
            )


class PythonExecutor(Calculator):
    """The node in one graph instance: holds the running generator, if any."""

    __slots__ = ("_generator", "_node", "_timestamp")

    def __init__(self, node: PythonExecutorNode) -> None:
        self._node = node
        self._generator: Iterator | None = None
        self._timestamp = 0

    def process(self, context: CalculatorContext) -> None:
        node = self._node
        inputs = node.inputs_of(context.inputs)
        if inputs:
            if self._generator is not None:
                raise NodeFailure(
                    "Node is already processing data. Create new stream for another request.",
                    "RESOURCE_EXHAUSTED",
                )
            check_tensors(inputs)
            self._timestamp = context.timestamp
            result = node.execute(inputs, context.graph_state)
            if isinstance(result, list):
                self._emit(result, context)
            elif isinstance(result, Iterator) and node.loopback is not None:
                self._generator = result
                self._generate(context)
            else:
                node.refuse_answer(result)
        elif self._generator is not None:  # the LOOPBACK packet: produce the next item
            self._timestamp = context.timestamp
            self._generate(context)

    def _generate(self, context: CalculatorContext) -> None:
        try:
            item = next(self._generator)
        except StopIteration:
            self._generator = None
            return
        except Exception as error:
            self._generator = None
            log.error("node %s: generator raised", self._node.node.name, exc_info=error)
            raise NodeFailure(f"{EXECUTION_ERROR} ({_type_name(error)}: {error})") from error
        if not isinstance(item, list):
            self._generator = None
            raise NodeFailure(
                f"Unexpected Python object type. Expected: list. Received: {_type_name(item)}"
            )
        self._emit(item, context)
        context.emit(self._node.loopback, True, self._timestamp + 1)

    def _emit(self, outputs: list, context: CalculatorContext) -> None:
        for tag, tensor in self._node.outputs_of(outputs):
            context.emit(tag, tensor, self._timestamp)

    def close(self, context: CalculatorContext) -> None:
        self._generator = None
