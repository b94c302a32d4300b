"""The pipeline, graph and custom-node library part of a reload.

- A library is loaded again when its entry changes; one that left the config is dropped (the
  pipelines still running on it keep it alive until they end).
- A pipeline is built again when its entry changes, when a model version or library it was
  built on no longer serves under its name (OVMS's "used model changed" revalidation), or, if
  it failed, when something it names changed (or on a config reload). The new definition is
  built beside the one serving and swapped in; the old one is closed once its requests end.
- A graph is loaded again when its entry changes or when its files do (``graph_files``); the
  new one is loaded beside the one serving and swapped in, and the old one finalizes its nodes
  once its running instances and streams end. A graph that failed is tried again on a config
  reload and whenever models change.
- A pipeline or graph left out of the config retires ("Pipeline is retired", "Mediapipe is
  retired") and stays listed as END.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from time import perf_counter
from typing import TYPE_CHECKING

from ovmsx import _core
from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.config.path_escape import escape_error, escapes
from ovmsx.config.pipeline_config import CustomNodeLibraryConfig, PipelineConfig
from ovmsx.servables import load_log
from ovmsx.servables.graph import Graph
from ovmsx.servables.load_log import MEDIAPIPE, PIPELINE
from ovmsx.servables.model_version import VersionState
from ovmsx.servables.pipeline import Pipeline, Served
from ovmsx.status import StatusCode, StatusError, status_error

if TYPE_CHECKING:
    from ovmsx.servables.registry import ServableRegistry

log = logging.getLogger("ovmsx.models")

# Kinds of refused entries, beside PIPELINE and MEDIAPIPE (names a model holds): a library
# path with "..".
LIBRARY_PATH = "library path"


class DefinitionUpdates:
    """Remembers, between reloads, what it cannot read off the servables themselves: which
    config each library was loaded from, and the entries refused for a name a model holds
    (so that a refusal is reported once, not on every poll)."""

    def __init__(self, registry: ServableRegistry) -> None:
        self._registry = registry
        self._libraries: dict[str, CustomNodeLibraryConfig] = {}
        self._refused: dict[tuple[str, str], object] = {}  # (kind, name) -> refused config

    # -- names ------------------------------------------------------------------------------

    def give_name_to_model(self, name: str, closing: list[Served]) -> None:
        """A model added under ``name`` takes it from the pipeline or graph that held it."""
        registry = self._registry
        why = "a model took the name"
        pipeline = registry.pipelines.pop(name, None)
        if pipeline is not None:
            served = pipeline.retire()
            if served is not None:
                closing.append(served)
            load_log.definition_state(PIPELINE, name, "RETIRED", load_log.RETIRE, why)
        graph = registry.graphs.pop(name, None)
        if graph is not None:
            registry.retire_graph(graph)
            load_log.definition_state(MEDIAPIPE, name, "RETIRED", load_log.RETIRE, why)

    def _model_holds(self, name: str) -> bool:
        """Whether a model serves under ``name``: a retired one gives the name up (a folder
        that became a graph, a model removed and its name given to a pipeline)."""
        model = self._registry.models.get(name)
        return model is not None and not model.retired

    def _refused_name(self, kind: str, config: object, retry: bool) -> StatusError | None:
        """The error for an entry named like a model (OVMS: the model keeps the name); None
        when it was reported already."""
        name = config.name
        if not self._first_refusal(kind, config, retry):
            return None
        code = (
            StatusCode.PIPELINE_NAME_OCCUPIED
            if kind == PIPELINE
            else StatusCode.MEDIAPIPE_GRAPH_NAME_OCCUPIED
        )
        error = status_error(code, name)
        log.error("%s %s not loaded: %s", kind.lower(), name, error.message)
        return error

    def _first_refusal(self, kind: str, config: object, retry: bool) -> bool:
        """Whether a refused entry is to be reported: once per config, or on ``retry``."""
        key = (kind, config.name)
        if not retry and self._refused.get(key) == config:
            return False
        self._refused[key] = config
        return True

    # -- libraries --------------------------------------------------------------------------

    async def libraries(
        self, configs: Sequence[CustomNodeLibraryConfig], retry: bool, errors: list[StatusError]
    ) -> set[str]:
        """Names of the libraries added, changed or removed."""
        registry = self._registry
        wanted: dict[str, CustomNodeLibraryConfig] = {}
        for config in configs:
            wanted.setdefault(config.name, config)  # the first definition of a name wins
        changed = set()
        for name in [n for n in registry.libraries if n not in wanted]:
            del registry.libraries[name]
            self._libraries.pop(name, None)
            changed.add(name)
            log.info("custom node library %s removed", name)
        for name, config in wanted.items():
            failed = isinstance(registry.libraries.get(name), StatusError)
            if self._libraries.get(name) == config and not (retry and failed):
                continue
            serving = registry.libraries.get(name)
            if escapes(config.base_path) and isinstance(serving, _core.CustomNodeLibrary):
                # OVMS refuses such a path before touching what is loaded: the library (and
                # the pipelines on it) keep serving.
                refused = escape_error(config.base_path, f"custom node library {name}")
                if self._first_refusal(LIBRARY_PATH, config, retry):
                    log.error("custom node library %s: %s", name, refused.message)
                    errors.append(refused)
                continue
            self._refused.pop((LIBRARY_PATH, name), None)
            loaded = await registry.load_library(config)
            registry.libraries[name] = loaded
            self._libraries[name] = config
            changed.add(name)
            if isinstance(loaded, StatusError):
                errors.append(loaded)
            else:
                log.info("custom node library %s loaded from %s", name, config.path)
        return changed

    # -- pipelines --------------------------------------------------------------------------

    async def pipelines(
        self,
        configs: Sequence[PipelineConfig],
        changed_models: Collection[str],
        changed_libraries: Collection[str],
        retry: bool,
        errors: list[StatusError],
        closing: list[Served],
    ) -> bool:
        registry = self._registry
        wanted = {config.name: config for config in configs}
        changed = False
        for name, pipeline in registry.pipelines.items():
            if name not in wanted and pipeline.state is not VersionState.END:
                served = pipeline.retire()
                if served is not None:
                    closing.append(served)
                load_log.definition_state(PIPELINE, name, "RETIRED", load_log.RETIRE)
                if registry.metrics is not None:
                    registry.metrics.on_pipeline_unloaded(name)
                changed = True
        for name, config in wanted.items():
            if self._model_holds(name):
                refused = self._refused_name(PIPELINE, config, retry)
                if refused is not None:
                    errors.append(refused)
                continue
            self._refused.pop((PIPELINE, name), None)
            pipeline = registry.pipelines.get(name)
            event = _pipeline_event(
                pipeline, config, changed_models, changed_libraries, retry, self._stale
            )
            if event is None:
                continue
            if pipeline is None:
                pipeline = registry.pipelines[name] = Pipeline(name, config)
            pipeline.config = config
            old = await self._build(pipeline, event, errors)
            if old is not None:
                closing.append(old)
            changed = True
        return changed

    async def _build(
        self, pipeline: Pipeline, event: str | None, errors: list[StatusError]
    ) -> Served | None:
        """(Re)build ``pipeline``; the definition it stops serving, if any."""
        registry = self._registry
        name = pipeline.name
        if event == load_log.RELOAD:
            load_log.definition_state(PIPELINE, name, "RELOADING", event)
        elif event == load_log.USED_MODEL_CHANGED:
            load_log.definition_state(PIPELINE, name, "AVAILABLE_REQUIRED_REVALIDATION", event)
        if not pipeline.available:
            pipeline.state = VersionState.LOADING
        started = perf_counter()
        try:
            definition = await registry.build_pipeline(pipeline.config)
        except StatusError as error:
            errors.append(error)
            details = f"{error.message}; load time: {load_log.duration(perf_counter() - started)}"
            load_log.definition_state(
                PIPELINE, name, "LOADING_PRECONDITION_FAILED", load_log.VALIDATION_FAILED, details
            )
            return pipeline.fail(error)
        old = pipeline.start(definition)
        if registry.metrics is not None:
            registry.metrics.on_pipeline_loaded(name)
        details = f"load time: {load_log.duration(perf_counter() - started)}"
        load_log.definition_state(PIPELINE, name, "AVAILABLE", load_log.VALIDATION_PASSED, details)
        return old

    def _stale(self, pipeline: Pipeline, changed_libraries: Collection[str]) -> bool:
        """Whether a serving pipeline was built on a model version or library that no longer
        serves under its name (a new default version, a version retired or reloaded)."""
        definition = pipeline.definition
        if definition is None:
            return False
        for spec in definition.nodes.values():
            node = spec.config
            if spec.model_version is not None:
                assert node.model_name is not None
                try:
                    now = self._registry.model(node.model_name).serving_version(node.version or 0)
                except StatusError:
                    return True
                if now is not spec.model_version:
                    return True
            elif node.custom_library in changed_libraries:
                return True
        return False

    # -- graphs -----------------------------------------------------------------------------

    async def graphs(
        self,
        configs: Sequence[MediapipeConfig],
        fingerprints: Mapping[str, str],
        models_changed: bool,
        retry: bool,
        errors: list[StatusError],
    ) -> bool:
        registry = self._registry
        wanted = {config.name: config for config in configs}
        changed = False
        for name, graph in registry.graphs.items():
            if name not in wanted and graph.state is not VersionState.END:
                registry.retire_graph(graph)
                load_log.definition_state(MEDIAPIPE, name, "RETIRED", load_log.RETIRE)
                if registry.metrics is not None:
                    registry.metrics.on_graph_unloaded(name)
                changed = True
        loads = []
        for name, config in wanted.items():
            if self._model_holds(name):
                refused = self._refused_name(MEDIAPIPE, config, retry)
                if refused is not None:
                    errors.append(refused)
                continue
            self._refused.pop((MEDIAPIPE, name), None)
            current = registry.graphs.get(name)
            files = fingerprints.get(name, "")
            if current is None or current.state is VersionState.END:
                loads.append(self._load_graph(Graph(name, config, fingerprint=files), None))
            elif current.config != config or current.fingerprint != files:
                load_log.definition_state(MEDIAPIPE, name, "RELOADING", load_log.RELOAD)
                graph_log = logging.getLogger("ovmsx.graphs")
                graph_log.info("Reloading mediapipe graph: %s", name)
                loads.append(self._load_graph(Graph(name, config, fingerprint=files), current))
            elif current.error is not None and (retry or models_changed):
                loads.append(self._load_graph(Graph(name, config, fingerprint=files), current))
        for error in await asyncio.gather(*loads):
            changed = True
            if error is not None:
                errors.append(error)
        return changed

    async def _load_graph(self, graph: Graph, current: Graph | None) -> StatusError | None:
        """Load ``graph`` in place of ``current``: beside it while ``current`` serves, swapped
        in once loaded (even if it failed, as in OVMS: the old definition does not come back)."""
        registry = self._registry
        serving = current is not None and current.available
        if not serving:
            registry.graphs[graph.name] = graph
        await registry.load_graph(graph)
        if current is not None and registry.graphs.get(graph.name) is current:
            registry.graphs[graph.name] = graph
            registry.retire_graph(current)
        return graph.error


def _pipeline_event(
    pipeline: Pipeline | None,
    config: PipelineConfig,
    changed_models: Collection[str],
    changed_libraries: Collection[str],
    retry: bool,
    stale: Callable[[Pipeline, Collection[str]], bool],
) -> str | None:
    """Why ``pipeline`` must be built now (an OVMS event name, or "" for a new one), or None."""
    if pipeline is None or pipeline.state is VersionState.END:
        return ""
    if pipeline.config != config:
        return load_log.RELOAD
    if pipeline.error is not None or not pipeline.available:
        uses = any(
            node.model_name in changed_models or node.custom_library in changed_libraries
            for node in config.nodes
        )
        return load_log.VALIDATION_FAILED if retry or uses else None
    if stale(pipeline, changed_libraries):
        return load_log.USED_MODEL_CHANGED
    return None
