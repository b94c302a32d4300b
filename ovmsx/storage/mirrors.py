"""Every cloud model's mirror: what a scan lists and fetches, and when copies are deleted.

A scan (run in a worker thread, once per config load and poll) lists the model's prefix once,
fetches the versions its policy selects that have no up-to-date copy, and reports the copies'
folders, which then load like local version folders. Copies are deleted by ``retain`` once
the versions using them have unloaded, all of a model's once it leaves the config, and every
copy by ``close`` when the server stops (and at interpreter exit, should a stop be skipped).
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ovmsx.config.version_policy import VersionPolicy
from ovmsx.status import StatusCode, StatusError, status_error
from ovmsx.storage.mirror import ModelMirror
from ovmsx.storage.objects import group_versions
from ovmsx.storage.store import ObjectStore, open_store
from ovmsx.storage.url import StorageUrl, parse

log = logging.getLogger("ovmsx.storage")

# What a model uses now: (its base path, version numbers that have not ended, model files
# its compiled versions were read from).
InUse = tuple[str, Collection[int], Collection[Path]]


@dataclass
class CloudScan:
    folders: dict[int, Path] = field(default_factory=dict)
    """Complete local copies, by version: the ones selected and the ones already held."""
    signatures: dict[int, tuple] = field(default_factory=dict)
    """Every listed version's objects (names, ETags or generations, sizes)."""
    unfetched: dict[int, StatusError] = field(default_factory=dict)
    """Selected versions whose fetch failed and that have no copy to fall back on."""


class CloudMirrors:
    def __init__(self) -> None:
        self._stores: dict[tuple[str, str | None], ObjectStore] = {}
        self._mirrors: dict[tuple[str, str], ModelMirror] = {}  # by (model, base path)
        self._closed = False
        # Scans run in a worker thread; a stopping server closes from the event loop's.
        self._lock = threading.Lock()
        atexit.register(self.close)

    def scan(self, model: str, base_path: str, policy: VersionPolicy, warn: bool) -> CloudScan:
        """List ``base_path`` and bring the copies of the versions ``policy`` selects up to
        date (blocking). Raises ``StatusError`` when the model's versions cannot be listed."""
        url = parse(base_path)
        store = self._store(url)
        listed = store.list(url)
        if not listed:
            raise status_error(StatusCode.PATH_INVALID, f"Directory does not exist: {url.text}")
        versions, others = group_versions(listed, url.key_prefix())
        if warn:
            for name in others:
                log.warning(
                    "%s: ignoring folder %r, version folders have numeric names", url.text, name
                )
        if not versions:
            raise status_error(StatusCode.NO_MODEL_VERSION_AVAILABLE, url.text)
        mirror = self._mirror(model, base_path, url)
        found = CloudScan(signatures={n: v.signature for n, v in versions.items()})
        selected = set(policy.select(versions))
        for number in sorted(versions):
            held = mirror.current(number)
            if number not in selected:
                if held is not None:  # still listed: it may serve on if a newer fetch fails
                    found.folders[number] = held.folder
                continue
            try:
                found.folders[number] = mirror.fetch(store, versions[number])
            except StatusError as error:
                if held is None:
                    found.unfetched[number] = error  # the reload reports it, as a version
                    continue
                found.folders[number] = held.folder
                if mirror.new_failure(number, error.message):
                    log.error(
                        "model %s version %d changed in the store but could not be fetched; "
                        "the copy fetched before stays: %s",
                        model,
                        number,
                        error.message,
                    )
        return found

    def retain(self, in_use: Mapping[str, InUse]) -> None:
        """Delete every copy nothing in ``in_use`` (by model name) needs any more."""
        with self._lock:
            for key, mirror in list(self._mirrors.items()):
                name, base_path = key
                use = in_use.get(name)
                if use is None or use[0] != base_path:
                    mirror.close()
                    del self._mirrors[key]
                else:
                    mirror.retain(use[1], use[2])

    def close(self) -> None:
        """Delete every copy; scans after this fail."""
        with self._lock:
            self._closed = True
            for mirror in self._mirrors.values():
                mirror.close()
            self._mirrors.clear()

    def _store(self, url: StorageUrl) -> ObjectStore:
        key = (url.scheme, url.endpoint)
        store = self._stores.get(key)
        if store is None:
            store = open_store(url)
            if store.usable:  # credentials that failed are read again on the next scan
                self._stores[key] = store
        return store

    def _mirror(self, model: str, base_path: str, url: StorageUrl) -> ModelMirror:
        with self._lock:
            if self._closed:
                raise status_error(StatusCode.FILESYSTEM_ERROR, f"{url.text}: server stopping")
            key = (model, base_path)
            mirror = self._mirrors.get(key)
            if mirror is None:
                mirror = self._mirrors[key] = ModelMirror(model, url)
            return mirror
