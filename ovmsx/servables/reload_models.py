"""The model part of a reload: models added, changed or removed, version folders appearing and
disappearing under each model's version policy.

New versions are compiled beside the ones serving and swapped in once available, so a model
whose config changes keeps answering throughout (OVMS stops it while it reloads). Versions to
retire are only marked here (UNLOADING: new requests get "retired", requests without a version
move to the highest version still available); the caller drains and closes them once the
pipelines that used them have moved on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ovmsx.config.model_config import ModelConfig
from ovmsx.config.path_escape import escape_error, escapes
from ovmsx.servables.model import Model
from ovmsx.servables.model_files import folder_signature, version_folders
from ovmsx.servables.model_version import ModelVersion, VersionState
from ovmsx.status import StatusCode, StatusError, status_error

if TYPE_CHECKING:
    from ovmsx.servables.registry import ServableRegistry
    from ovmsx.storage import CloudMirrors

log = logging.getLogger("ovmsx.models")


@dataclass
class VersionScan:
    """What one model's base path holds now (read in a worker thread)."""

    folders: dict[int, Path] = field(default_factory=dict)
    error: StatusError | None = None
    signatures: dict[int, tuple] = field(default_factory=dict)  # of the failed versions' folders
    unfetched: dict[int, StatusError] = field(default_factory=dict)
    """Cloud versions whose copy could not be made (ovmsx/storage): listed as failed,
    without retiring what serves."""


@dataclass
class ModelChange:
    changed: bool = False
    errors: list[StatusError] = field(default_factory=list)


def scan(config: ModelConfig, failed: set[int], warn: bool, mirrors: CloudMirrors) -> VersionScan:
    """The version folders of ``config``'s model (blocking: call off the loop). A cloud model's
    folders are local copies of its versions, fetched here (ovmsx/storage)."""
    if escapes(config.base_path):
        return VersionScan(error=escape_error(config.base_path, f"model {config.name}"))
    if config.local_path is None:
        return _scan_cloud(config, warn, mirrors)
    try:
        folders = version_folders(config.local_path, warn)
    except StatusError as error:
        return VersionScan(error=error)
    signatures = {n: folder_signature(folders[n]) for n in failed if n in folders}
    return VersionScan(folders, signatures=signatures)


def _scan_cloud(config: ModelConfig, warn: bool, mirrors: CloudMirrors) -> VersionScan:
    assert config.base_path is not None  # remote
    try:
        found = mirrors.scan(config.name, config.base_path, config.model_version_policy, warn)
    except StatusError as error:
        return VersionScan(error=error)
    except Exception as error:  # a bug or a client library's surprise: report, serve the rest
        log.exception("model %s: %s", config.name, config.base_path)
        return VersionScan(error=status_error(StatusCode.INTERNAL_ERROR, repr(error)))
    # The store's signatures, not the copies': a version that failed to load is tried again
    # when its objects change in the store.
    return VersionScan(found.folders, signatures=found.signatures, unfetched=found.unfetched)


def scan_all(
    wanted: Sequence[tuple[ModelConfig, set[int], bool]], mirrors: CloudMirrors
) -> list[VersionScan]:
    return [scan(config, failed, warn, mirrors) for config, failed, warn in wanted]


def failed_versions(model: Model | None) -> set[int]:
    if model is None:
        return set()
    return {n for n, v in model.versions.items() if v.error is not None}


def retire_removed(model: Model, retiring: list[tuple[ModelVersion, bool]]) -> None:
    """``model`` left the config: every version it has ends; the model stays listed."""
    model.config = None
    model.load_error = None
    model.failed_folders.clear()
    for number, version in sorted(model.versions.items()):
        if version.state < VersionState.UNLOADING:
            log.info("Will unload model: %s; version: %d ...", model.name, number)
            version.change(VersionState.UNLOADING)
            retiring.append((version, False))


async def update_model(
    registry: ServableRegistry,
    config: ModelConfig,
    found: VersionScan,
    retry: bool,
    retiring: list[tuple[ModelVersion, bool]],
) -> ModelChange:
    """Bring model ``config.name`` in line with ``config`` and what its folders hold.

    A new model, one back in the config or one whose config changed loads every version its
    policy selects (a changed one reloads them all, as OVMS does). Otherwise only versions
    that appeared load, and versions whose folders are gone retire. A version that failed is
    tried again on ``retry`` (a config reload) or when its folder's files change.
    """
    name = config.name
    model = registry.models.get(name)
    if model is None:
        model = registry.models[name] = Model(name, config)
        whole = True
    else:
        whole = model.retired or model.config != config
        model.config = config
    change = ModelChange()
    if found.error is not None:
        message = f"model {name}: {found.error.message}"
        if whole or retry or message != model.load_error:
            log.error("%s", message)
            change.errors.append(found.error)
        model.load_error = message
        if found.error.code is not StatusCode.NO_MODEL_VERSION_AVAILABLE and not whole:
            return change  # a path that cannot be read now: keep serving what is loaded
        if escapes(config.base_path):
            return change  # refused before anything is touched (OVMS): the old versions serve
        folders: dict[int, Path] = {}
    else:
        model.load_error = None
        folders = found.folders
    wanted = config.model_version_policy.select(folders)
    current = {n: v for n, v in model.versions.items() if v.state < VersionState.UNLOADING}
    to_load = [n for n in wanted if whole or n not in current or _retry(model, n, found, retry)]
    for number in to_load:
        version = await _load(registry, model, config, number, folders[number], retiring)
        if version.error is not None:
            change.errors.append(version.error)
            signature = found.signatures.get(number)
            if signature is None:
                signature = await asyncio.to_thread(folder_signature, folders[number])
            model.failed_folders[number] = signature
        else:
            model.failed_folders.pop(number, None)
    # A cloud version whose copy failed is listed as failed; what serves keeps serving.
    for number, error in sorted(found.unfetched.items()):
        if _unfetched(model, number, error, retry):
            change.errors.append(error)
    to_retire = [n for n in current if n not in wanted and n not in found.unfetched]
    for number in sorted(to_retire):
        version = model.versions[number]
        log.info("Will unload model: %s; version: %d ...", name, number)
        version.change(VersionState.UNLOADING)
        model.failed_folders.pop(number, None)
        retiring.append((version, False))
    change.changed = bool(to_load or to_retire)
    return change


def _unfetched(model: Model, number: int, error: StatusError, retry: bool) -> bool:
    """Record that version ``number``'s copy could not be made; False when nothing changed
    (a version that serves, or the failure reported before, between config loads)."""
    held = model.versions.get(number)
    if held is not None and held.state < VersionState.UNLOADING:
        serves = held.error is None
        reported = not serves and held.error.message == error.message and not retry
        if serves or reported:
            return False
    log.error("model %s version %d: not loaded, no local copy: %s", model.name, number, error)
    version = ModelVersion(model.name, number)
    version.error = error
    version.change(VersionState.LOADING)  # OVMS's state for a version that failed to load
    model.versions[number] = version
    model.failed_folders[number] = ()  # unlike any listing: once fetched, it loads
    return True


def _retry(model: Model, number: int, found: VersionScan, retry: bool) -> bool:
    version = model.versions[number]
    if version.error is None:
        return False
    return retry or found.signatures.get(number) != model.failed_folders.get(number)


async def _load(
    registry: ServableRegistry,
    model: Model,
    config: ModelConfig,
    number: int,
    folder: Path,
    retiring: list[tuple[ModelVersion, bool]],
) -> ModelVersion:
    """Load version ``number``: beside the one serving, swapped in once loaded (which then
    retires, replaced), or straight into the model's list when nothing serves under it."""
    serving = model.versions.get(number)
    version = ModelVersion(model.name, number)
    if serving is not None and serving.available:
        log.info("Will reload model: %s version: %d", model.name, number)
        await registry.compile_into(version, config, folder)
        model.versions[number] = version
        serving.change(VersionState.UNLOADING, quiet=True)
        retiring.append((serving, True))
        return version
    log.info("Will add model: %s; version: %d ...", model.name, number)
    version.change(VersionState.START)
    model.versions[number] = version
    await registry.compile_into(version, config, folder)
    return version


async def scan_models(
    registry: ServableRegistry, configs: Sequence[ModelConfig], retry: bool
) -> list[VersionScan]:
    """Every model's folders, listed in one worker thread."""
    wanted = []
    for config in configs:
        model = registry.models.get(config.name)
        quiet = not retry and model is not None and model.config == config
        wanted.append((config, failed_versions(model), not quiet))
    return await asyncio.to_thread(scan_all, wanted, registry.mirrors)
