"""Running a pipeline for one request.

Every node is a task that waits for the nodes it reads from, so independent branches run at
the same time. A chain of quick nodes without demultiplexers also runs blocking, on the thread
that has the request (``runs_now``, ``run_pipeline_now``): no task, no hand-off.

A value is kept per shard: the key of a tensor is the tuple of shard indices of the
demultiplexers open at its node (``()`` outside any). A demultiplexer's outputs fan out to
keys one index longer; a gathering node stacks the last index back; the response stacks
whatever is still open.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping, Sequence

from ovmsx import _core
from ovmsx.config.pipeline_config import ENTRY_NODE
from ovmsx.graph.graph_run import run_without_suspending
from ovmsx.pipeline.pipeline_definition import NodeSpec, PipelineDefinition
from ovmsx.pipeline.shards import renamed, split, stack
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.status import StatusCode, status_error

Key = tuple[int, ...]
Values = dict[Key, _core.Tensor]

STRING_SUFFIX = "_string"  # custom-node outputs in the 2-D padded U8 form, sent as strings


class TensorInput:
    """A tensor between nodes, checked by a model's InputValidator like a request input."""

    __slots__ = ("datatype", "name", "shape", "tensor")

    def __init__(self, name: str, tensor: _core.Tensor) -> None:
        self.name = name
        self.datatype = tensor.datatype
        self.shape = tuple(tensor.shape)
        self.tensor = tensor

    def to_tensor(self, model_datatype: str, element_count: int) -> _core.Tensor:
        return renamed(self.tensor, self.name)


class _StringInput:
    """A BYTES request input for a custom node, turned into the 2-D zero-padded U8 form that
    custom nodes take (its width is known only once the strings are read)."""

    __slots__ = ("_tensor", "datatype", "name", "shape")

    def __init__(self, given) -> None:
        self._tensor = _padded_if_strings(given.to_graph_tensor(python=False))
        self.name = given.name
        self.datatype = self._tensor.datatype
        self.shape = tuple(self._tensor.shape)

    def to_tensor(self, model_datatype: str, element_count: int) -> _core.Tensor:
        return self._tensor


def string_inputs_as_padded(definition: PipelineDefinition, inputs: Sequence) -> list:
    """Request inputs, with strings meant for custom nodes turned into their U8 form."""
    return [
        _StringInput(given)
        if given.datatype == "BYTES" and given.name in definition.string_inputs
        else given
        for given in inputs
    ]


def _gather_last(values: Values, where: str) -> Values:
    groups: dict[Key, list[tuple[int, _core.Tensor]]] = defaultdict(list)
    for key, tensor in values.items():
        groups[key[:-1]].append((key[-1], tensor))
    return {
        key: stack([t for _, t in sorted(shards, key=lambda s: s[0])], where)
        for key, shards in groups.items()
    }


def runs_now(definition: PipelineDefinition) -> bool:
    """Whether a request can run right on the caller's thread: a chain of nodes with no
    demultiplexer, every model measured quick and every custom node quick enough to run
    inline (so the whole run never has to wait for another thread)."""
    if not definition.plain_chain:
        return False
    for spec in definition.nodes.values():
        if spec.model_version is not None:
            compiled = spec.model_version.compiled
            if compiled is None or not compiled.runs_here():
                return False
        elif spec.caller is None or not spec.caller.inline:
            return False
    return True


def run_pipeline_now(
    definition: PipelineDefinition, tensors: Mapping[str, _core.Tensor]
) -> list[_core.Tensor]:
    """``run_pipeline`` on the caller's thread, every node blocking, for ``runs_now``."""
    return run_without_suspending(run_pipeline(definition, tensors, None))


async def run_pipeline(
    definition: PipelineDefinition,
    tensors: Mapping[str, _core.Tensor],
    dispatcher: InferenceDispatcher | None,
) -> list[_core.Tensor]:
    """The pipeline's outputs for the request's (validated) inputs, in config order. Without
    a dispatcher every node runs blocking on this thread (``run_pipeline_now``)."""
    config = definition.config
    values: dict[tuple[str, str], Values] = {}
    for name, tensor in tensors.items():
        if definition.entry_depth:
            shards = split(tensor, config.demultiply_count, f"pipeline input {name}")
            values[(ENTRY_NODE, name)] = {(i,): s for i, s in enumerate(shards)}
        else:
            values[(ENTRY_NODE, name)] = {(): tensor}

    if definition.sequential:  # a chain: nothing could run alongside, so spare the tasks
        for name in definition.order:
            await _run_node(definition.nodes[name], {}, values, dispatcher)
    else:
        await _run_concurrently(definition, values, dispatcher)

    outputs = []
    for output_name, source in config.output_sources:
        found = values[(source.node_name, source.data_item)]
        while next(iter(found)) != ():
            found = _gather_last(found, f"output {output_name}")
        tensor = found[()]
        upstream = definition.nodes.get(source.node_name)
        if upstream is not None and upstream.custom is not None:
            tensor = _strings_if_named(tensor, upstream, source.data_item)
        outputs.append(renamed(tensor, output_name))
    return outputs


async def _run_concurrently(
    definition: PipelineDefinition,
    values: dict[tuple[str, str], Values],
    dispatcher: InferenceDispatcher | None,
) -> None:
    """One task per node, each waiting for the nodes it reads from."""
    tasks: dict[str, asyncio.Task] = {}
    for name in definition.order:
        spec = definition.nodes[name]
        tasks[name] = asyncio.ensure_future(_run_node(spec, tasks, values, dispatcher))
    try:
        await asyncio.gather(*tasks.values())
    except BaseException:
        for task in tasks.values():
            task.cancel()
        raise


async def _run_node(
    spec: NodeSpec,
    tasks: Mapping[str, asyncio.Task],
    values: dict[tuple[str, str], Values],
    dispatcher: InferenceDispatcher | None,
) -> None:
    if tasks:
        await asyncio.gather(*(tasks[name] for name in spec.upstream))
    inputs: dict[str, Values] = {
        input_name: values[(source.node_name, source.data_item)]
        for input_name, source in spec.config.input_sources
    }
    if spec.config.gather_from_node is not None:
        inputs = {n: _gather_last(v, f"node {spec.name} input {n}") for n, v in inputs.items()}
    keys = sorted(next(iter(inputs.values())))
    if len(keys) == 1:
        (key,) = keys
        results = [await _execute(spec, {n: v[key] for n, v in inputs.items()}, dispatcher)]
    else:  # one call per shard, all at once
        results = await asyncio.gather(
            *(_execute(spec, {n: v[key] for n, v in inputs.items()}, dispatcher) for key in keys)
        )
    count = spec.config.demultiply_count
    for key, produced in zip(keys, results, strict=True):
        for output in spec.config.outputs:
            tensor = produced.get(output.data_item)
            if tensor is None:
                raise status_error(
                    StatusCode.NODE_LIBRARY_MISSING_OUTPUT,
                    f"node {spec.name} did not produce {output.data_item}",
                )
            slot = values.setdefault((spec.name, output.alias), {})
            if count is None:
                slot[key] = tensor
                continue
            where = f"node {spec.name} output {output.data_item}"
            for index, shard in enumerate(split(tensor, count, where)):
                slot[(*key, index)] = shard


async def _execute(
    spec: NodeSpec, inputs: dict[str, _core.Tensor], dispatcher: InferenceDispatcher | None
) -> dict[str, _core.Tensor]:
    if spec.model_version is not None:
        compiled = spec.model_version.compiled
        if compiled is None:
            raise status_error(StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE, spec.name)
        given = [TensorInput(name, tensor) for name, tensor in inputs.items()]
        ordered = compiled.validator.tensors(given)
        if dispatcher is None:
            outputs = compiled.infer_here(ordered)
        else:
            outputs = await compiled.infer_submitted(ordered, dispatcher)
        if compiled.meter is not None:
            compiled.meter.pipeline_call()
        return {port.name: tensor for port, tensor in zip(compiled.outputs, outputs, strict=True)}
    assert spec.caller is not None
    prepared = [_padded_if_strings(renamed(t, name)) for name, t in inputs.items()]
    if dispatcher is None:
        produced = spec.caller.execute_here(prepared)
    else:
        produced = await spec.caller.execute(prepared)
    return {tensor.name: tensor for tensor in produced}


def _padded_if_strings(tensor: _core.Tensor) -> _core.Tensor:
    """Strings reach custom nodes as the 2-D zero-padded U8 form, as in OVMS."""
    if tensor.datatype != "BYTES":
        return tensor
    return _core.bytes_to_padded(_core.bytes_unpack(tensor), tensor.name)


def _strings_if_named(tensor: _core.Tensor, spec: NodeSpec, data_item: str) -> _core.Tensor:
    """A custom node's 2-D U8 output named ``*_string`` goes to the client as strings."""
    output = next((o.data_item for o in spec.config.outputs if o.alias == data_item), "")
    if not output.endswith(STRING_SUFFIX) or tensor.datatype != "UINT8" or len(tensor.shape) != 2:
        return tensor
    items = _core.bytes_from_padded(tensor)
    return _core.Tensor._from_raw(tensor.name, _core.bytes_pack(items), [len(items)], "BYTES")
