"""A loaded pipeline: its nodes resolved to models and custom-node instances, checked as a DAG.

Loading checks everything OVMS checks before the first request: node names, references to
nodes, models, libraries, inputs and outputs, cycles, demultiplexer/gather order (gathers close
demultiplexers last-in first-out), datatype and shape agreement between connected nodes, and
agreement between the nodes that share a pipeline input. The first problem found is the error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise

from ovmsx import _core
from ovmsx.config.pipeline_config import (
    ENTRY_NODE,
    EXIT_NODE,
    PipelineConfig,
    PipelineNode,
    Source,
)
from ovmsx.pipeline.custom_call import CustomNodeCaller
from ovmsx.pipeline.ports import PortSpec, from_port_info, from_tensor_info, intersect
from ovmsx.servables.model_version import ModelVersion
from ovmsx.status import StatusCode, StatusError, status_error


def _error(code: StatusCode, pipeline: str, details: str) -> StatusError:
    return status_error(code, f"pipeline {pipeline}: {details}")


@dataclass
class NodeSpec:
    config: PipelineNode
    inputs: dict[str, PortSpec]  # the node's own input names
    outputs: dict[str, PortSpec]  # the node's own output names
    model_version: ModelVersion | None = None
    custom: _core.CustomNode | None = None
    caller: CustomNodeCaller | None = None  # how requests call ``custom``
    upstream: set[str] = field(default_factory=set)  # node names this one reads from
    depth: tuple[str, ...] = ()  # the demultiplexers open when the node runs, outermost first

    @property
    def name(self) -> str:
        return self.config.name

    def alias_port(self, alias: str) -> PortSpec | None:
        for output in self.config.outputs:
            if output.alias == alias:
                return self.outputs.get(output.data_item)
        return None


@dataclass
class PipelineDefinition:
    config: PipelineConfig
    nodes: dict[str, NodeSpec]
    order: list[str]  # upstream first
    inputs: dict[str, PortSpec]  # pipeline input name -> what the request must carry
    outputs: dict[str, PortSpec]  # pipeline output name -> what the response carries
    entry_depth: tuple[str, ...]  # ("request",) when the pipeline demultiplexes its inputs
    string_inputs: frozenset[str] = frozenset()  # inputs read only as 2-D U8 by custom nodes

    sequential: bool = False  # a chain: each node reads from the one before it
    # A chain with no demultiplexer anywhere: one node after the other, one call each, so a
    # request can run blocking on one thread once its nodes are quick (pipeline_run.runs_now).
    plain_chain: bool = False

    def close(self) -> None:
        """Retire the custom-node instances (``deinitialize`` runs once their outputs die)."""
        for node in self.nodes.values():
            if node.custom is not None:
                node.custom.close()


ModelLookup = Callable[[str, int | None], ModelVersion]  # raises StatusError when missing
LibraryLookup = Callable[[str], "_core.CustomNodeLibrary"]  # raises StatusError when missing


def build_definition(
    config: PipelineConfig, models: ModelLookup, libraries: LibraryLookup
) -> PipelineDefinition:
    name = config.name
    nodes: dict[str, NodeSpec] = {}
    made: list[NodeSpec] = []
    try:
        for node in config.nodes:
            if node.name in nodes or node.name in (ENTRY_NODE, EXIT_NODE):
                raise _error(StatusCode.PIPELINE_NODE_NAME_DUPLICATE, name, f"node {node.name}")
            spec = _resolve(node, name, models, libraries)
            made.append(spec)
            nodes[node.name] = spec
        _check_outputs(nodes, name)
        _connect(config, nodes)
        order = _topological_order(config, nodes)
        entry_depth = (ENTRY_NODE,) if config.demultiply_count is not None else ()
        _check_demultiplexing(config, nodes, order, entry_depth)
        _check_dynamic_demultiplexers(config, nodes)
        inputs = _pipeline_inputs(config, nodes, entry_depth)
        _check_connections(config, nodes, inputs)
        outputs = _pipeline_outputs(config, nodes, inputs, entry_depth)
    except BaseException:
        for spec in made:
            if spec.custom is not None:
                spec.custom.close()
        raise
    strings = _string_inputs(config, nodes)
    # In a chain no two nodes can ever run at the same time, so requests skip the tasks.
    chain = all(before in nodes[name].upstream for before, name in pairwise(order))
    plain = chain and not entry_depth
    plain = plain and all(spec.config.demultiply_count is None for spec in nodes.values())
    return PipelineDefinition(
        config, nodes, order, inputs, outputs, entry_depth, strings, chain, plain
    )


def _string_inputs(config: PipelineConfig, nodes: Mapping[str, NodeSpec]) -> frozenset[str]:
    """Pipeline inputs that may come as strings: every reader is a custom node taking the 2-D
    zero-padded U8 form (OVMS's string convention for custom nodes)."""
    readers: dict[str, list[PortSpec | None]] = {name: [] for name in config.inputs}
    for spec in nodes.values():
        for input_name, source in spec.config.input_sources:
            if source.node_name == ENTRY_NODE:
                port = spec.inputs[input_name]
                takes_text = spec.custom is not None and port.datatype == "UINT8"
                readers[source.data_item].append(
                    port if takes_text and len(port.dims) == 2 else None
                )
    return frozenset(name for name, ports in readers.items() if ports and all(ports))


def _resolve(
    node: PipelineNode, pipeline: str, models: ModelLookup, libraries: LibraryLookup
) -> NodeSpec:
    if node.type == "DL model":
        assert node.model_name is not None
        try:
            version = models(node.model_name, node.version)
        except StatusError as missing:
            raise _error(
                StatusCode.PIPELINE_NODE_REFERING_TO_MISSING_MODEL,
                pipeline,
                f"node {node.name}: model {node.model_name}: {missing.message}",
            ) from None
        compiled = version.compiled
        assert compiled is not None
        return NodeSpec(
            node,
            {p.name: from_port_info(p) for p in compiled.inputs},
            {p.name: from_port_info(p) for p in compiled.outputs},
            model_version=version,
        )
    assert node.custom_library is not None
    try:
        library = libraries(node.custom_library)
    except StatusError as missing:
        raise _error(
            StatusCode.PIPELINE_DEFINITION_INVALID_NODE_LIBRARY,
            pipeline,
            f"node {node.name}: library {node.custom_library}: {missing.message}",
        ) from None
    custom = library.initialize(dict(node.params))
    try:
        inputs = {i.name: from_tensor_info(i) for i in custom.inputs_info()}
        outputs = {o.name: from_tensor_info(o) for o in custom.outputs_info()}
    except BaseException:
        custom.close()
        raise
    return NodeSpec(
        node,
        inputs,
        outputs,
        custom=custom,
        caller=CustomNodeCaller(custom, f"pipeline {pipeline} node {node.name}"),
    )


def _check_outputs(nodes: Mapping[str, NodeSpec], pipeline: str) -> None:
    for spec in nodes.values():
        for output in spec.config.outputs:
            if output.data_item not in spec.outputs:
                raise _error(
                    StatusCode.PIPELINE_NODE_REFERING_TO_MISSING_MODEL_OUTPUT,
                    pipeline,
                    f"node {spec.name} has no output {output.data_item}",
                )


def _source_port(
    source: Source, config: PipelineConfig, nodes: Mapping[str, NodeSpec], reader: str
) -> PortSpec | None:
    """The port a source names (None for a pipeline input); errors for dangling names."""
    if source.node_name == ENTRY_NODE:
        if source.data_item not in config.inputs:
            raise _error(
                StatusCode.PIPELINE_NODE_REFERING_TO_MISSING_DATA_SOURCE,
                config.name,
                f"{reader} reads {source.data_item}, which is not a pipeline input",
            )
        return None
    upstream = nodes.get(source.node_name)
    if upstream is None:
        raise _error(
            StatusCode.PIPELINE_NODE_REFERING_TO_MISSING_NODE,
            config.name,
            f"{reader} reads from node {source.node_name}, which does not exist",
        )
    port = upstream.alias_port(source.data_item)
    if port is None:
        raise _error(
            StatusCode.PIPELINE_NODE_REFERING_TO_MISSING_DATA_SOURCE,
            config.name,
            f"{reader} reads {source.data_item}, which node {source.node_name} does not output",
        )
    return port


def _connect(config: PipelineConfig, nodes: dict[str, NodeSpec]) -> None:
    for spec in nodes.values():
        seen: set[str] = set()
        for input_name, source in spec.config.input_sources:
            if input_name not in spec.inputs:
                raise _error(
                    StatusCode.PIPELINE_CONNECTION_TO_MISSING_MODEL_INPUT,
                    config.name,
                    f"node {spec.name} has no input {input_name}",
                )
            if input_name in seen:
                raise _error(
                    StatusCode.PIPELINE_MODEL_INPUT_CONNECTED_TO_MULTIPLE_DATA_SOURCES,
                    config.name,
                    f"node {spec.name} input {input_name}",
                )
            seen.add(input_name)
            _source_port(source, config, nodes, f"node {spec.name} input {input_name}")
            if source.node_name != ENTRY_NODE:
                spec.upstream.add(source.node_name)
        missing = sorted(set(spec.inputs) - seen)
        if missing:
            raise _error(
                StatusCode.PIPELINE_NOT_ALL_INPUTS_CONNECTED,
                config.name,
                f"node {spec.name} inputs {', '.join(missing)} are not connected",
            )
    for output_name, source in config.output_sources:
        _source_port(source, config, nodes, f"output {output_name}")


def _topological_order(config: PipelineConfig, nodes: Mapping[str, NodeSpec]) -> list[str]:
    order: list[str] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = [*path[path.index(name) :], name]
            raise _error(StatusCode.PIPELINE_CYCLE_FOUND, config.name, " -> ".join(cycle))
        state[name] = 1
        for upstream in sorted(nodes[name].upstream):
            visit(upstream, [*path, name])
        state[name] = 2
        order.append(name)

    for name in nodes:
        visit(name, [])
    used = {s.node_name for _, s in config.output_sources}
    for spec in nodes.values():
        used |= spec.upstream
    unused = [name for name in nodes if name not in used]
    if unused:
        raise _error(
            StatusCode.PIPELINE_CONTAINS_UNCONNECTED_NODES,
            config.name,
            f"nobody reads the outputs of {', '.join(unused)}",
        )
    return order


def _check_demultiplexing(
    config: PipelineConfig,
    nodes: Mapping[str, NodeSpec],
    order: list[str],
    entry_depth: tuple[str, ...],
) -> None:
    """Every node's inputs come from one level of demultiplexing; gathers close the innermost
    open demultiplexer first."""
    after: dict[str, tuple[str, ...]] = {ENTRY_NODE: entry_depth}
    for name in order:
        spec = nodes[name]
        levels = {after[s.node_name] for _, s in spec.config.input_sources}
        if len(levels) > 1:
            raise _error(
                StatusCode.PIPELINE_WRONG_DEMULTIPLEXER_GATHER_NODES_ORDER,
                config.name,
                f"node {name} mixes inputs from different demultiplexer levels",
            )
        depth = next(iter(levels)) if levels else entry_depth
        gather = spec.config.gather_from_node
        if gather is not None:
            if gather not in nodes and gather != ENTRY_NODE:
                raise _error(
                    StatusCode.PIPELINE_NODE_GATHER_FROM_NOT_EXISTING_NODE,
                    config.name,
                    f"node {name} gathers from {gather}",
                )
            demultiplies = (
                config.demultiply_count is not None
                if gather == ENTRY_NODE
                else nodes[gather].config.demultiply_count is not None
            )
            if not demultiplies:
                raise _error(
                    StatusCode.PIPELINE_NODE_GATHER_FROM_NOT_DEMULTIPLEXER,
                    config.name,
                    f"node {name} gathers from {gather}",
                )
            if not depth or depth[-1] != gather:
                raise _error(
                    StatusCode.PIPELINE_WRONG_DEMULTIPLEXER_GATHER_NODES_ORDER,
                    config.name,
                    f"node {name} gathers from {gather}, but the innermost open "
                    f"demultiplexer is {depth[-1] if depth else 'none'}",
                )
            depth = depth[:-1]
        spec.depth = depth
        after[name] = (*depth, name) if spec.config.demultiply_count is not None else depth


def _demultiply_count(name: str, config: PipelineConfig, nodes: Mapping[str, NodeSpec]) -> int:
    """The ``demultiply_count`` of demultiplexer ``name`` (``request``: the pipeline's)."""
    count = config.demultiply_count if name == ENTRY_NODE else nodes[name].config.demultiply_count
    return -1 if count is None else count


def _check_dynamic_demultiplexers(config: PipelineConfig, nodes: Mapping[str, NodeSpec]) -> None:
    """A dynamic demultiplexer (-1) inside another one, with no gather between them, is
    refused as OVMS refuses it (NOT_IMPLEMENTED)."""
    for spec in nodes.values():
        if spec.config.demultiply_count != -1:
            continue
        for outer in spec.depth:
            if _demultiply_count(outer, config, nodes) == -1:
                raise _error(
                    StatusCode.NOT_IMPLEMENTED,
                    config.name,
                    f"node {spec.name} demultiplies dynamically (demultiply_count -1) the "
                    f"shards of dynamic demultiplexer {outer}, with no gather between them; "
                    "a pipeline can open one dynamic demultiplexer at a time",
                )


def _port_seen_by(
    source: Source,
    config: PipelineConfig,
    nodes: Mapping[str, NodeSpec],
    port: PortSpec,
    gathered: str | None,
) -> PortSpec:
    """The port as the reader gets it: demultiplexed sources lose their first dimension,
    gathered ones (from demultiplexer ``gathered``) gain one."""
    upstream = nodes.get(source.node_name)
    if upstream is not None and upstream.config.demultiply_count is not None:
        port = port.without_first_dim()
    if gathered is None:
        return port
    return port.with_first_dim(_demultiply_count(gathered, config, nodes))


def _pipeline_inputs(
    config: PipelineConfig, nodes: Mapping[str, NodeSpec], entry_depth: tuple[str, ...]
) -> dict[str, PortSpec]:
    found: dict[str, PortSpec] = {}
    entry_count = _demultiply_count(ENTRY_NODE, config, nodes)
    # As in OVMS, the pipeline's inputs are what its connections read: a declared input that
    # no node and no output reads is left out (not in metadata, not asked of requests).
    read = {s.data_item for _, s in config.output_sources if s.node_name == ENTRY_NODE}
    for spec in nodes.values():
        read |= {s.data_item for _, s in spec.config.input_sources if s.node_name == ENTRY_NODE}
    for name in config.inputs:
        if name not in read:
            continue
        wanted: set[PortSpec] = set()
        for spec in nodes.values():
            for input_name, source in spec.config.input_sources:
                if source.node_name == ENTRY_NODE and source.data_item == name:
                    port = spec.inputs[input_name].renamed(name)
                    if spec.config.gather_from_node == ENTRY_NODE:
                        port = port.without_first_dim()
                    wanted.add(port.with_first_dim(entry_count) if entry_depth else port)
        merged: PortSpec | None = PortSpec(name, "", (), True)
        for port in wanted:
            merged = intersect(merged, port) if merged is not None else None
        if merged is None:
            raise _error(
                StatusCode.PIPELINE_INPUTS_AMBIGUOUS_METADATA, config.name, f"input {name}"
            )
        found[name] = merged
    return found


def _check_connections(
    config: PipelineConfig, nodes: Mapping[str, NodeSpec], inputs: Mapping[str, PortSpec]
) -> None:
    for spec in nodes.values():
        gathered = spec.config.gather_from_node
        for input_name, source in spec.config.input_sources:
            if source.node_name == ENTRY_NODE:
                continue
            port = _source_port(source, config, nodes, input_name)
            assert port is not None
            given = _port_seen_by(source, config, nodes, port, gathered)
            wanted = spec.inputs[input_name]
            if given.datatype and wanted.datatype and given.datatype != wanted.datatype:
                raise _error(
                    StatusCode.INVALID_PRECISION,
                    config.name,
                    f"node {spec.name} input {input_name} wants {wanted.datatype}, "
                    f"node {source.node_name} gives {given.datatype}",
                )
            if not given.fits(wanted):
                raise _error(
                    StatusCode.INVALID_SHAPE,
                    config.name,
                    f"node {spec.name} input {input_name} wants {wanted.shape()}, "
                    f"node {source.node_name} gives {given.shape()}",
                )


def _pipeline_outputs(
    config: PipelineConfig,
    nodes: Mapping[str, NodeSpec],
    inputs: Mapping[str, PortSpec],
    entry_depth: tuple[str, ...],
) -> dict[str, PortSpec]:
    found = {}
    for output_name, source in config.output_sources:
        if source.node_name == ENTRY_NODE:
            found[output_name] = inputs[source.data_item].renamed(output_name)
            continue
        spec = nodes[source.node_name]
        port = _source_port(source, config, nodes, output_name)
        assert port is not None
        port = _port_seen_by(source, config, nodes, port, gathered=None)
        # The response stacks every demultiplexer still open, innermost first; a static
        # count gives its dimension that size (OVMS shows [4,1,10] for demultiply_count 4).
        levels = [*spec.depth, *([spec.name] if spec.config.demultiply_count is not None else [])]
        for level in reversed(levels):
            port = port.with_first_dim(_demultiply_count(level, config, nodes))
        found[output_name] = port.renamed(output_name)
    return found
