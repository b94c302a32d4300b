"""The registry: every servable the server knows, their versions and states, and ``infer``.

All methods run on the event loop's thread; loading compiles in worker threads.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from pathlib import Path

from ovmsx import _core
from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.config.model_config import ModelConfig
from ovmsx.config.pipeline_config import CustomNodeLibraryConfig, PipelineConfig
from ovmsx.graph.graph_workers import WorkerPool
from ovmsx.pipeline.pipeline_definition import build_definition
from ovmsx.pipeline.pipeline_run import (
    run_pipeline,
    run_pipeline_now,
    runs_now,
    string_inputs_as_padded,
)
from ovmsx.quoting import quote
from ovmsx.servables.graph import Graph
from ovmsx.servables.graph_sessions import GraphSessions
from ovmsx.servables.infer_request import InferRequest, InferResult
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.model import Model, parse_version
from ovmsx.servables.model_files import version_folders
from ovmsx.servables.model_loader import CompiledVersion, compile_version
from ovmsx.servables.model_version import ModelVersion, VersionState
from ovmsx.servables.pipeline import Pipeline
from ovmsx.status import StatusCode, StatusError, status_error

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

    # -- loading ---------------------------------------------------------------------------

    async def load(
        self,
        configs: Sequence[ModelConfig],
        graphs: Sequence[MediapipeConfig] = (),
        pipelines: Sequence[PipelineConfig] = (),
        libraries: Sequence[CustomNodeLibraryConfig] = (),
    ) -> None:
        """Load every model, then pipelines and graphs; one that fails is reported, the rest
        serve."""
        await asyncio.gather(*(self._load_model(config) for config in configs))
        await self._load_pipelines(pipelines, libraries)
        for config in graphs:
            if config.name in self.models:
                # The model keeps its name; the graph is reported and not served.
                error = status_error(StatusCode.MEDIAPIPE_GRAPH_NAME_OCCUPIED, config.name)
                log.error("graph %s not loaded: %s", config.name, error.message)
                continue
            self.graphs.setdefault(config.name, Graph(config.name, config))
        await asyncio.gather(*(self._load_graph(graph) for graph in self.graphs.values()))
        self.initial_load_done = True

    async def _load_pipelines(
        self, pipelines: Sequence[PipelineConfig], libraries: Sequence[CustomNodeLibraryConfig]
    ) -> None:
        for library in libraries:
            if library.name in self.libraries:
                continue
            try:
                self.libraries[library.name] = await asyncio.to_thread(
                    _core.CustomNodeLibrary.load, str(library.path)
                )
            except StatusError as error:
                self.libraries[library.name] = error
                log.error("custom node library %s: %s", library.name, error.message)
        for config in pipelines:
            if config.name in self.models:
                error = status_error(StatusCode.PIPELINE_NAME_OCCUPIED, config.name)
                log.error("pipeline %s not loaded: %s", config.name, error.message)
                continue
            pipeline = self.pipelines.setdefault(config.name, Pipeline(config.name, config))
            pipeline.state = VersionState.LOADING
            try:
                definition = await asyncio.to_thread(
                    build_definition, config, self._pipeline_model, self._library
                )
            except StatusError as error:
                pipeline.error = error
                log.error("pipeline %s failed to load: %s", config.name, error.message)
                continue
            except Exception as error:  # a bug: report it, keep serving the rest
                log.exception("pipeline %s", config.name)
                pipeline.error = status_error(StatusCode.INTERNAL_ERROR, repr(error))
                continue
            pipeline.start(definition)
            log.info("pipeline %s available", config.name)

    def _pipeline_model(self, name: str, version: int | None) -> ModelVersion:
        return self.model(name).serving_version(version or 0)

    def _library(self, name: str) -> _core.CustomNodeLibrary:
        found = self.libraries.get(name)
        if found is None:
            raise status_error(StatusCode.NODE_LIBRARY_MISSING, name)
        if isinstance(found, StatusError):
            raise found
        return found

    async def _load_graph(self, graph: Graph) -> None:
        graph.state = VersionState.LOADING
        try:
            sessions = GraphSessions(self, asyncio.get_running_loop())
            await asyncio.to_thread(graph.load, sessions)
        except StatusError as error:
            graph.error = error
        except Exception as error:  # a bug: report it, keep serving the rest
            log.exception("graph %s", graph.name)
            graph.error = status_error(StatusCode.INTERNAL_ERROR, repr(error))
        if graph.error is not None:
            log.error("graph %s failed to load: %s", graph.name, graph.error.message)
            return
        graph.state = VersionState.AVAILABLE
        log.info("graph %s available (%s)", graph.name, graph.config.graph_file)

    async def _load_model(self, config: ModelConfig) -> None:
        model = self.models.setdefault(config.name, Model(config.name))
        try:
            if config.local_path is None:
                raise status_error(
                    StatusCode.PATH_INVALID, f"{config.base_path}: cloud storage is not supported"
                )
            folders = version_folders(config.local_path)
        except StatusError as error:
            model.load_error = f"model {config.name}: {error.message}"
            log.error("%s", model.load_error)
            return
        for number in config.model_version_policy.select(folders):
            await self.load_version(config, number, folders[number])

    async def load_version(self, config: ModelConfig, number: int, folder: Path) -> ModelVersion:
        """Compile version ``number`` of ``config``'s model from ``folder`` and make it
        available; a version that fails stays listed with its error. Requests asking for the
        default version use it as soon as it is the highest available one."""
        model = self.models.setdefault(config.name, Model(config.name))
        version = ModelVersion(config.name, number, VersionState.LOADING)
        model.versions[number] = version
        try:
            version.compiled = await asyncio.to_thread(
                compile_version, config, number, folder, self._dispatcher.queue, self._cache
            )
        except StatusError as error:
            version.error = error
        except Exception as error:  # a bug or an OpenVINO surprise: report, keep serving
            log.exception("model %s version %d", config.name, number)
            version.error = status_error(StatusCode.INTERNAL_ERROR, repr(error))
        if version.error is not None:
            log.error("%s", version.status_line())
            return version
        version.state = VersionState.AVAILABLE
        log.info("%s from %s", version.status_line(), version.compiled.path)
        return version

    async def unload(self) -> None:
        """Retire every graph (``finalize``), then every model version: waiting jobs fail,
        running ones finish first."""
        for graph in self.graphs.values():
            graph.state = VersionState.UNLOADING
            await asyncio.to_thread(graph.retire)
            graph.state = VersionState.END
        await asyncio.to_thread(self.graph_workers.close)
        for pipeline in self.pipelines.values():
            pipeline.retire()
        for model in self.models.values():
            for version in model.versions.values():
                version.state = VersionState.UNLOADING
                if version.compiled is not None:
                    await asyncio.to_thread(version.compiled.pool.close)
                    version.compiled = None
                version.state = VersionState.END

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
        definition, validator = _serving_pipeline(pipeline, request)
        by_name = _pipeline_inputs(definition, validator, request)
        outputs = await run_pipeline(definition, by_name, self._dispatcher)
        return _pipeline_result(pipeline, request, outputs)

    def infer_pipeline_now(self, pipeline: Pipeline, request: InferRequest) -> InferResult | None:
        """The answer on the caller's thread for a chain of quick nodes (``runs_now``); None
        when the pipeline must run as ``infer_pipeline``."""
        definition, validator = _serving_pipeline(pipeline, request)
        if not runs_now(definition):
            return None
        by_name = _pipeline_inputs(definition, validator, request)
        return _pipeline_result(pipeline, request, run_pipeline_now(definition, by_name))

    def infer_now(self, request: InferRequest) -> InferResult | None:
        """The answer on the caller's thread when the model is quick and one of its infer
        requests is idle (the GIL is released while it infers); None when the request should
        wait for an infer request asynchronously (``infer``) instead."""
        version, compiled = self._serving_compiled(request)
        if not compiled.runs_here():
            return None
        tensors = _model_inputs(compiled, request)
        outputs = compiled.pool.infer(tensors, True)
        return _model_result(request, version, compiled, outputs)

    async def infer(self, request: InferRequest) -> InferResult:
        version, compiled = self._serving_compiled(request)
        tensors = _model_inputs(compiled, request)
        outputs = await self._dispatcher.infer(compiled.pool, tensors)
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


def _serving_pipeline(pipeline: Pipeline, request: InferRequest):
    """The definition and input validator of a pipeline that can answer ``request`` now."""
    pipeline.check_version(request.version)
    return pipeline.serving()


def _pipeline_inputs(definition, validator, request: InferRequest) -> dict[str, _core.Tensor]:
    """The request's inputs checked against the pipeline's, by name."""
    tensors = validator.tensors(string_inputs_as_padded(definition, request.inputs))
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
