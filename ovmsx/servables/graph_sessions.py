"""Models and pipelines as OpenVINO inference nodes of graphs see them (their SESSION).

A session names a servable; each ``infer`` resolves it again, so a graph that asks for the
default version uses a newer version as soon as it is available, as OVMS does. A model runs on
its own pool of infer requests through ``InferencePool.infer``: the calling graph worker
blocks with the GIL released and the inputs stay zero-copy. Inputs are checked by the model's
own request validator, so a graph gets the messages a client would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ovmsx import _core
from ovmsx.pipeline.pipeline_run import TensorInput
from ovmsx.pipeline.ports import PortSpec, from_port_info
from ovmsx.quoting import quote
from ovmsx.servables.infer_request import InferRequest
from ovmsx.status import StatusCode, status_error

if TYPE_CHECKING:
    from ovmsx.servables.model_loader import CompiledVersion
    from ovmsx.servables.registry import ServableRegistry


class ModelSession:
    __slots__ = ("_registry", "name", "version")

    def __init__(self, registry: ServableRegistry, name: str, version: int) -> None:
        self._registry = registry
        self.name = name
        self.version = version  # 0: the default version, looked up per inference

    def _compiled(self) -> CompiledVersion:
        compiled = self._registry.model(self.name).serving_version(self.version).compiled
        assert compiled is not None  # serving_version only returns available versions
        return compiled

    def infer(self, inputs: Mapping[str, _core.Tensor]) -> dict[str, _core.Tensor]:
        compiled = self._compiled()
        outputs = compiled.infer_blocking(compiled.validator.tensors(_given(inputs)))
        return {tensor.name: tensor for tensor in outputs}

    async def infer_async(self, inputs: Mapping[str, _core.Tensor]) -> dict[str, _core.Tensor]:
        compiled = self._compiled()
        tensors = compiled.validator.tensors(_given(inputs))
        outputs = await compiled.infer_from_loop(tensors, self._registry.dispatcher)
        return {tensor.name: tensor for tensor in outputs}


class PipelineSession:
    """A DAG pipeline; it runs on the event loop, the graph worker waits for its answer."""

    __slots__ = ("_loop", "_registry", "name")

    def __init__(self, registry: ServableRegistry, name: str, loop) -> None:
        self._registry = registry
        self._loop = loop
        self.name = name

    def infer(self, inputs: Mapping[str, _core.Tensor]) -> dict[str, _core.Tensor]:
        run = self.infer_async(inputs)
        return asyncio.run_coroutine_threadsafe(run, self._loop).result()

    async def infer_async(self, inputs: Mapping[str, _core.Tensor]) -> dict[str, _core.Tensor]:
        pipeline = self._registry.pipelines[self.name]
        request = InferRequest(self.name, "", _given(inputs))
        result = await self._registry.infer_pipeline(pipeline, request)
        return {tensor.name: tensor for tensor in result.outputs}


class GraphSessions:
    """The ``ServableResolver`` graphs load with: the registry's models and pipelines."""

    def __init__(self, registry: ServableRegistry, loop: asyncio.AbstractEventLoop) -> None:
        self._registry = registry
        self.loop = loop
        """The server's event loop (pipelines run there; an LLM node's engine is read there)."""
        # Sessions hold no state of their own (the version is looked up per inference), so
        # one per (servable, version) serves every graph instance.
        self._sessions: dict[tuple[str, int], ModelSession | PipelineSession] = {}

    def session(self, name: str, version: int) -> ModelSession | PipelineSession:
        """The servable as it can serve now; raises ``StatusError`` when it cannot."""
        registry = self._registry
        if name in registry.models:
            registry.model(name).serving_version(version)
            kind = ModelSession
        elif name in registry.pipelines:  # one version; OVMS ignores the one asked
            registry.pipelines[name].serving()
            kind = PipelineSession
        else:
            raise status_error(StatusCode.MODEL_NAME_MISSING, f"name: {quote(name)}")
        found = self._sessions.get((name, version))
        if type(found) is not kind:
            found = self._sessions[(name, version)] = (
                ModelSession(registry, name, version)
                if kind is ModelSession
                else PipelineSession(registry, name, self.loop)
            )
        return found

    def ports(self, name: str, version: int) -> tuple[dict, dict] | None:
        registry = self._registry
        if name in registry.models:
            compiled = registry.model(name).serving_version(version).compiled
            if compiled is None:
                return None
            return _by_name(map(from_port_info, compiled.inputs)), _by_name(
                map(from_port_info, compiled.outputs)
            )
        pipeline = registry.pipelines.get(name)
        if pipeline is not None:
            definition, _ = pipeline.serving()
            return _by_name(definition.inputs.values()), _by_name(definition.outputs.values())
        return None


def _given(inputs: Mapping[str, _core.Tensor]) -> list[TensorInput]:
    return [TensorInput(name, tensor) for name, tensor in inputs.items()]


def _by_name(ports) -> dict[str, PortSpec]:
    return {port.name: port for port in ports if isinstance(port, PortSpec)}
