"""The registry: every servable the server knows, their versions and states, and ``infer``.

All methods run on the event loop's thread; loading compiles in worker threads. What to load,
reload and retire is decided by ``updates`` (ovmsx/servables/reload.py) from a config; the
registry's own methods do it: compile a version, retire one once its inferences have ended,
build a pipeline, load a graph, retire one once its instances have ended.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING

from ovmsx import _core
from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.config.model_config import ModelConfig
from ovmsx.config.pipeline_config import CustomNodeLibraryConfig, PipelineConfig
from ovmsx.config.servables import Servables
from ovmsx.graph.graph_workers import WorkerPool
from ovmsx.images.off_loop import off_loop
from ovmsx.in_flight import DRAIN_POLL_SECONDS
from ovmsx.pipeline.pipeline_definition import PipelineDefinition, build_definition
from ovmsx.pipeline.pipeline_run import (
    run_pipeline,
    run_pipeline_now,
    runs_now,
    string_inputs_as_padded,
)
from ovmsx.quoting import quote
from ovmsx.servables import load_log
from ovmsx.servables.graph import Graph
from ovmsx.servables.graph_sessions import GraphSessions
from ovmsx.servables.infer_request import InferRequest, InferResult
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.load_log import MEDIAPIPE, VALIDATION_FAILED, VALIDATION_PASSED
from ovmsx.servables.model import Model, parse_version
from ovmsx.servables.model_loader import CompiledVersion, compile_version
from ovmsx.servables.model_version import ModelVersion, VersionState
from ovmsx.servables.pipeline import Pipeline, Served
from ovmsx.servables.reload import Reloader
from ovmsx.status import StatusCode, StatusError, status_error
from ovmsx.storage import CloudMirrors

if TYPE_CHECKING:
    from ovmsx.metrics.serving_metrics import ServingMetrics

log = logging.getLogger("ovmsx.models")

# Threads running graph instances. Python nodes share the GIL, so more threads mostly add
# contention with the event loop (measured with bench/bench_graphs.py: 2 did best at
# concurrency 4 on a 2-core machine); two still overlap user code that releases the GIL.
GRAPH_WORKERS = 2


class ServableRegistry:
    def __init__(self, dispatcher: InferenceDispatcher, cache_dir: Path | None = None) -> None:
        self._dispatcher = dispatcher
        self._cache = cache_dir
        self.models: dict[str, Model] = {}
        self.graphs: dict[str, Graph] = {}
        self.pipelines: dict[str, Pipeline] = {}
        self.libraries: dict[str, _core.CustomNodeLibrary | StatusError] = {}
        self.graph_workers = WorkerPool(GRAPH_WORKERS)
        self.initial_load_done = False
        self.metrics: ServingMetrics | None = None  # told of every servable loaded, when on
        self.updates = Reloader(self)
        """Brings the servables in line with a config (ovmsx/servables/reload.py)."""
        self._graphs_retiring: dict[asyncio.Task, Graph] = {}
        self.mirrors = CloudMirrors()
        """Local copies of the versions of models on s3:// and gs:// (ovmsx/storage)."""

    # -- loading: ``updates`` (ovmsx/servables/reload.py) decides what, these do it ---------

    async def load(
        self,
        configs: Sequence[ModelConfig],
        graphs: Sequence[MediapipeConfig] = (),
        pipelines: Sequence[PipelineConfig] = (),
        libraries: Sequence[CustomNodeLibraryConfig] = (),
    ) -> None:
        """Load every model, then pipelines and graphs; one that fails is reported, the rest
        serve. (A reload from nothing: the first load and a later one are the same thing.)"""
        await self.updates.apply(Servables(configs, graphs, pipelines, libraries), retry=True)
        self.initial_load_done = True

    async def load_version(self, config: ModelConfig, number: int, folder: Path) -> ModelVersion:
        """Compile version ``number`` of ``config``'s model from ``folder`` and make it
        available; a version that fails stays listed with its error. Requests asking for the
        default version use it as soon as it is the highest available one."""
        model = self.models.get(config.name)
        if model is None:
            model = self.models[config.name] = Model(config.name, config)
        version = ModelVersion(config.name, number)
        version.change(VersionState.START)
        model.versions[number] = version
        await self.compile_into(version, config, folder)
        return version

    async def compile_into(self, version: ModelVersion, config: ModelConfig, folder: Path) -> None:
        """LOADING, then AVAILABLE with its compiled model, or LOADING with the error (OVMS
        leaves a version that failed to load in LOADING, error code UNKNOWN)."""
        number = version.version
        version.change(VersionState.LOADING)
        load_log.loading_model(config, number, folder)
        started = perf_counter()
        try:
            compiled = await asyncio.to_thread(
                compile_version, config, number, folder, self._dispatcher.queue, self._cache
            )
        except StatusError as error:
            version.error = error
        except Exception as error:  # a bug or an OpenVINO surprise: report, keep serving
            log.exception("model %s version %d", config.name, number)
            version.error = status_error(StatusCode.INTERNAL_ERROR, repr(error))
        seconds = perf_counter() - started
        if version.error is not None:
            load_log.model_failed(config.name, number, version.error.message, seconds)
            version.change(VersionState.LOADING)
            return
        if self.metrics is not None:  # before it serves: its first request is counted
            self.metrics.on_version_loaded(config.name, number, compiled)
        version.compiled = compiled
        load_log.loaded_model(config.name, number, compiled.inputs, compiled.pool.size, seconds)
        version.change(VersionState.AVAILABLE)

    async def retire_version(self, version: ModelVersion, replaced: bool = False) -> None:
        """UNLOADING (new requests get "retired"), then, once the inferences it has taken
        have finished (OVMS waits the same way), its pool closed and END. A version
        ``replaced`` by a reload ends without a word: its successor carries its number."""
        if version.state < VersionState.UNLOADING:
            version.change(VersionState.UNLOADING, quiet=replaced)
        compiled = version.compiled
        if compiled is not None:
            await _pool_drained(compiled.pool)
            await asyncio.to_thread(compiled.pool.close)
            version.compiled = None
        version.error = None
        version.change(VersionState.END, quiet=replaced)
        if not replaced and self.metrics is not None:
            self.metrics.on_version_unloaded(version.model_name, version.version)

    async def load_library(
        self, config: CustomNodeLibraryConfig
    ) -> _core.CustomNodeLibrary | StatusError:
        try:
            return await asyncio.to_thread(_core.CustomNodeLibrary.load, str(config.path))
        except StatusError as error:
            log.error("custom node library %s: %s", config.name, error.message)
            return error

    async def build_pipeline(self, config: PipelineConfig) -> PipelineDefinition:
        """Check ``config`` against the models and libraries serving now; raises
        ``StatusError`` naming what is wrong."""
        try:
            return await asyncio.to_thread(
                build_definition, config, self._pipeline_model, self._library
            )
        except StatusError:
            raise
        except Exception as error:  # a bug: report it, keep serving the rest
            log.exception("pipeline %s", config.name)
            raise status_error(StatusCode.INTERNAL_ERROR, repr(error)) from None

    def _pipeline_model(self, name: str, version: int | None) -> ModelVersion:
        return self.model(name).serving_version(version or 0)

    def _library(self, name: str) -> _core.CustomNodeLibrary:
        found = self.libraries.get(name)
        if found is None:
            raise status_error(StatusCode.NODE_LIBRARY_MISSING, name)
        if isinstance(found, StatusError):
            raise found
        return found

    async def load_graph(self, graph: Graph) -> None:
        """Load ``graph`` (user code runs in a worker thread); AVAILABLE, or its error."""
        graph.state = VersionState.LOADING
        started = perf_counter()
        try:
            sessions = GraphSessions(self, asyncio.get_running_loop())
            await asyncio.to_thread(graph.load, sessions)
        except StatusError as error:
            graph.error = error
        except Exception as error:  # a bug: report it, keep serving the rest
            log.exception("graph %s", graph.name)
            graph.error = status_error(StatusCode.INTERNAL_ERROR, repr(error))
        took = load_log.duration(perf_counter() - started)
        if graph.error is not None:
            details = f"{graph.error.message}; load time: {took}"
            load_log.definition_state(
                MEDIAPIPE, graph.name, "LOADING_PRECONDITION_FAILED", VALIDATION_FAILED, details
            )
            return
        if self.metrics is not None:
            self.metrics.on_graph_loaded(graph.name)
        graph.state = VersionState.AVAILABLE
        details = f"{graph.config.graph_file}; load time: {took}"
        load_log.definition_state(MEDIAPIPE, graph.name, "AVAILABLE", VALIDATION_PASSED, details)

    def retire_graph(self, graph: Graph) -> None:
        """No new requests or streams for ``graph`` ("Mediapipe is retired"); the ones running
        go on, and its nodes are finalized once they have all ended."""
        graph.state = VersionState.END
        task = asyncio.create_task(_finalize_when_idle(graph))
        self._graphs_retiring[task] = graph
        task.add_done_callback(self._graphs_retiring.pop)

    async def unload(self) -> None:
        """Retire every graph (``finalize``), then every model version: waiting jobs fail,
        running ones finish first. Local copies of cloud versions are deleted last, whatever
        happened before."""
        try:
            await self._unload_servables()
        finally:
            self.mirrors.close()

    async def _unload_servables(self) -> None:
        retiring = dict(self._graphs_retiring)  # replaced or removed, still draining
        for task in retiring:
            task.cancel()
        await asyncio.gather(*retiring, return_exceptions=True)
        for graph in [*retiring.values(), *self.graphs.values()]:
            graph.state = VersionState.UNLOADING
            await asyncio.to_thread(graph.retire)
            graph.state = VersionState.END
        await asyncio.to_thread(self.graph_workers.close)
        for pipeline in self.pipelines.values():
            served = pipeline.retire()
            if served is not None:
                served.definition.close()
        for model in self.models.values():
            for version in model.versions.values():
                if version.state is VersionState.END:
                    continue
                version.change(VersionState.UNLOADING)
                if version.compiled is not None:
                    await asyncio.to_thread(version.compiled.pool.close)
                    version.compiled = None
                version.change(VersionState.END)

    @property
    def dispatcher(self) -> InferenceDispatcher:
        return self._dispatcher

    # -- lookup ----------------------------------------------------------------------------

    def model(self, name: str) -> Model:
        found = self.models.get(name)
        if found is None:
            raise status_error(StatusCode.MODEL_NAME_MISSING, f"name: {quote(name)}")
        return found

    def version(self, name: str, version: str) -> ModelVersion:
        """The version a request names, whatever its state (for ready/metadata)."""
        number = parse_version(version)  # OVMS parses the version before the name
        return self.model(name).version(number)

    def serving_version(self, name: str, version: str) -> ModelVersion:
        """The version a request names, if it can answer now; OVMS's errors otherwise."""
        number = parse_version(version)
        return self.model(name).serving_version(number)

    # -- inference -------------------------------------------------------------------------

    async def infer_pipeline(self, pipeline: Pipeline, request: InferRequest) -> InferResult:
        served = _serving_pipeline(pipeline, request)
        served.in_flight.enter()  # a reload closes this definition only once we are done
        try:
            if served.validator.decodes(request.inputs):  # encoded images: off the loop
                by_name = await off_loop(_pipeline_inputs, served, request)
            else:
                by_name = _pipeline_inputs(served, request)
            outputs = await run_pipeline(served.definition, by_name, self._dispatcher)
        finally:
            served.in_flight.leave()
        return _pipeline_result(pipeline, request, outputs)

    def infer_pipeline_now(self, pipeline: Pipeline, request: InferRequest) -> InferResult | None:
        """The answer on the caller's thread for a chain of quick nodes (``runs_now``); None
        when the pipeline must run as ``infer_pipeline``."""
        served = _serving_pipeline(pipeline, request)
        if not runs_now(served.definition) or served.validator.decodes(request.inputs):
            return None
        served.in_flight.enter()
        try:
            by_name = _pipeline_inputs(served, request)
            outputs = run_pipeline_now(served.definition, by_name)
        finally:
            served.in_flight.leave()
        return _pipeline_result(pipeline, request, outputs)

    def infer_now(self, request: InferRequest) -> InferResult | None:
        """The answer on the caller's thread when the model is quick and one of its infer
        requests is idle (the GIL is released while it infers); None when the request should
        wait for an infer request asynchronously (``infer``) instead."""
        version, compiled = self._serving_compiled(request)
        if not compiled.runs_here() or compiled.validator.decodes(request.inputs):
            return None
        tensors = _model_inputs(compiled, request)
        outputs = compiled.infer_here(tensors)
        return _model_result(request, version, compiled, outputs)

    async def infer(self, request: InferRequest) -> InferResult:
        version, compiled = self._serving_compiled(request)
        if compiled.validator.decodes(request.inputs):  # encoded images: off the loop
            tensors = await off_loop(_model_inputs, compiled, request)
        else:
            tensors = _model_inputs(compiled, request)
        outputs = await compiled.infer_submitted(tensors, self._dispatcher)
        return _model_result(request, version, compiled, outputs)

    def _serving_compiled(self, request: InferRequest) -> tuple[ModelVersion, CompiledVersion]:
        version = self.serving_version(request.servable_name, request.version)
        compiled = version.compiled
        assert compiled is not None  # serving_version only returns available versions
        return version, compiled


def _model_inputs(compiled: CompiledVersion, request: InferRequest) -> list[_core.Tensor]:
    """The request's inputs checked against the model, in its input order."""
    tensors = compiled.validator.tensors(request.inputs)
    _check_requested_outputs(compiled.output_names, request.requested_outputs)
    return tensors


def _model_result(
    request: InferRequest,
    version: ModelVersion,
    compiled: CompiledVersion,
    outputs: list[_core.Tensor],
) -> InferResult:
    return InferResult(request.servable_name, version.version, _pick(outputs, compiled, request))


def _serving_pipeline(pipeline: Pipeline, request: InferRequest) -> Served:
    """The definition (and input validator) of a pipeline that can answer ``request`` now."""
    pipeline.check_version(request.version)
    return pipeline.serving_run()


def _pipeline_inputs(served: Served, request: InferRequest) -> dict[str, _core.Tensor]:
    """The request's inputs checked against the pipeline's, by name."""
    definition = served.definition
    tensors = served.validator.tensors(string_inputs_as_padded(definition, request.inputs))
    _check_requested_outputs(definition.outputs.keys(), request.requested_outputs)
    return dict(zip(definition.inputs, tensors, strict=True))


def _pipeline_result(
    pipeline: Pipeline, request: InferRequest, outputs: list[_core.Tensor]
) -> InferResult:
    if request.requested_outputs:
        produced = {t.name: t for t in outputs}
        outputs = [produced[name] for name in request.requested_outputs]
    return InferResult(pipeline.name, 1, outputs)


def _check_requested_outputs(known: Collection[str], requested: Sequence[str]) -> None:
    for name in requested:
        if name not in known:
            raise status_error(StatusCode.INVALID_MISSING_OUTPUT, f"Required output: {quote(name)}")


def _pick(
    outputs: list[_core.Tensor], compiled: CompiledVersion, request: InferRequest
) -> list[_core.Tensor]:
    """The requested outputs in the order asked, or all of them by name (OVMS's order)."""
    if not request.requested_outputs:
        return [outputs[i] for i in compiled.by_name_order]
    by_name = {t.name: t for t in outputs}
    return [by_name[name] for name in request.requested_outputs]


async def _pool_drained(pool: _core.InferencePool) -> None:
    """Until no inference runs or waits on ``pool``. Seen idle twice in a row, so that a
    request that looked its version up just before it retired has had its chance to start."""
    idle_checks = 0
    while idle_checks < 2:
        idle_checks = idle_checks + 1 if pool.active + pool.waiting == 0 else 0
        await asyncio.sleep(DRAIN_POLL_SECONDS)


async def _finalize_when_idle(graph: Graph) -> None:
    plan = graph.plan
    if plan is not None:
        await plan.in_flight.drained()
    await asyncio.to_thread(graph.retire)
