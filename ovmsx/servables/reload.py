"""Bringing the servables in line with a config: config is a value, and only what changed
reloads.

``Reloader.apply(servables)`` compares what a config asks for with what serves, and changes
only the difference: models and their versions (``reload_models``), then custom-node
libraries, pipelines and graphs (``reload_definitions``). The first load is an ``apply`` from
nothing. New servables are built beside the ones serving and swapped in; what retires drains
first: pipelines finish the requests they took, then model versions finish their inferences
(OVMS waits the same way), and only then close. Graphs finalize in the background once their
running instances and streams end, since a stream may last for hours.

Every failure of one entry is reported (logged, and in ``Outcome.errors`` in config order:
models, libraries, pipelines, graphs) and the rest of the config still applies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.config.servables import Servables
from ovmsx.servables import load_log
from ovmsx.servables.graph_files import fingerprint
from ovmsx.servables.model_version import ModelVersion, VersionState
from ovmsx.servables.pipeline import Served
from ovmsx.servables.reload_definitions import DefinitionUpdates
from ovmsx.servables.reload_models import retire_removed, scan_models, update_model
from ovmsx.status import StatusError
from ovmsx.storage.mirrors import InUse

if TYPE_CHECKING:
    from ovmsx.servables.registry import ServableRegistry


@dataclass
class Outcome:
    changed: bool = False
    """Whether anything was added, reloaded or retired."""
    errors: list[StatusError] = field(default_factory=list)
    """What failed, first failure first."""


class Reloader:
    def __init__(self, registry: ServableRegistry) -> None:
        self._registry = registry
        self._definitions = DefinitionUpdates(registry)
        self._lock = asyncio.Lock()  # one change at a time, whoever asks (poller, API, signal)

    async def fingerprints(self, graphs: Sequence[MediapipeConfig]) -> dict[str, str]:
        """What each graph's files hold now (read in a worker thread)."""

        def read() -> dict[str, str]:
            return {graph.name: fingerprint(graph) for graph in graphs if not graph.is_remote}

        return await asyncio.to_thread(read)

    def graph_files_changed(self, fingerprints: Mapping[str, str]) -> bool:
        """Whether the files of a graph that is loaded (or failed) changed since it loaded."""
        graphs = self._registry.graphs
        return any(
            name in graphs and graphs[name].fingerprint != files
            for name, files in fingerprints.items()
        )

    async def apply(
        self,
        servables: Servables,
        *,
        retry: bool,
        fingerprints: Mapping[str, str] | None = None,
    ) -> Outcome:
        """Serve ``servables``. ``retry``: try again what failed before, although its entry is
        the same (a config load does; a poll between config changes does not, so that a broken
        entry is not reloaded and reported every second)."""
        async with self._lock:
            return await self._apply(servables, retry, fingerprints)

    async def _apply(
        self, servables: Servables, retry: bool, fingerprints: Mapping[str, str] | None
    ) -> Outcome:
        registry = self._registry
        if fingerprints is None:
            fingerprints = await self.fingerprints(servables.graphs)
        outcome = Outcome()
        defaults = {name: model.default_number() for name, model in registry.models.items()}
        retiring: list[tuple[ModelVersion, bool]] = []
        closing: list[Served] = []

        wanted = {config.name: config for config in servables.models}
        changed_models = set()
        for name, model in registry.models.items():
            if name not in wanted and not model.retired:
                retire_removed(model, retiring)
                changed_models.add(name)
        for name in wanted:
            held = registry.models.get(name)
            if held is None or held.retired:  # a graph or pipeline may hold the name now
                self._definitions.give_name_to_model(name, closing)
        scans = await scan_models(registry, list(wanted.values()), retry)
        changes = await asyncio.gather(
            *(
                update_model(registry, config, found, retry, retiring)
                for config, found in zip(wanted.values(), scans, strict=True)
            )
        )
        for config, change in zip(wanted.values(), changes, strict=True):
            outcome.errors.extend(change.errors)
            if change.changed:
                changed_models.add(config.name)

        definitions = self._definitions
        changed_libraries = await definitions.libraries(servables.libraries, retry, outcome.errors)
        pipelines_changed = await definitions.pipelines(
            servables.pipelines, changed_models, changed_libraries, retry, outcome.errors, closing
        )
        graphs_changed = await definitions.graphs(
            servables.graphs, fingerprints, bool(changed_models), retry, outcome.errors
        )
        outcome.changed = bool(
            changed_models or changed_libraries or pipelines_changed or graphs_changed or closing
        )

        # Retire what left: pipelines first, so that the model versions they ran on are
        # idle once their own requests are done.
        for served in closing:
            await served.close()
        for version, replaced in retiring:
            await registry.retire_version(version, replaced)
        registry.mirrors.retain(_cloud_in_use(registry))
        for name, model in registry.models.items():
            now = model.default_number()
            if now != defaults.get(name):
                load_log.default_version(name, defaults.get(name), now)
        return outcome


def _cloud_in_use(registry: ServableRegistry) -> dict[str, InUse]:
    """What each cloud model still uses once retired versions have ended: the local copies of
    its other versions are deleted (ovmsx/storage)."""
    in_use: dict[str, InUse] = {}
    for name, model in registry.models.items():
        config = model.config
        if config is None or not config.is_remote or config.base_path is None:
            continue
        live = [v for v in model.versions.values() if v.state < VersionState.END]
        files = [v.compiled.path for v in live if v.compiled is not None]
        in_use[name] = (config.base_path, [v.version for v in live], files)
    return in_use
