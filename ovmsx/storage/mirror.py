"""One model's local copies of its cloud versions.

The copies live in a private folder (``tempfile.mkdtemp``: mode 0700, under ``TMPDIR`` or
``/tmp``), one sub-folder per fetched version. A version is fetched into a hidden staging
folder and renamed into place only when every file arrived, so a loader never sees a partial
copy, and a failed fetch leaves the copy that serves untouched. A version whose objects change
in the store is fetched again into a new folder; the old one stays until nothing uses it.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ovmsx.status import StatusCode, status_error
from ovmsx.storage.objects import VersionObjects
from ovmsx.storage.store import ObjectStore
from ovmsx.storage.url import StorageUrl

log = logging.getLogger("ovmsx.storage")


@dataclass(frozen=True)
class Copy:
    folder: Path
    signature: tuple


class ModelMirror:
    def __init__(self, model: str, url: StorageUrl) -> None:
        self.model = model
        self.url = url
        self._root: Path | None = None  # made on the first fetch
        self._current: dict[int, Copy] = {}  # the newest complete copy of each version
        self._older: list[Path] = []  # copies replaced by a newer fetch, maybe still in use
        self._closed = False  # once closed (the server stops), nothing is fetched again
        self._failures: dict[int, str] = {}  # the last failed fetch of a version, as logged

    def current(self, number: int) -> Copy | None:
        return self._current.get(number)

    def fetch(self, store: ObjectStore, version: VersionObjects) -> Path:
        """A complete local copy of ``version``: the current one if its objects are unchanged,
        else a new one. Raises ``StatusError`` (nothing of the failed fetch is left)."""
        held = self._current.get(version.number)
        if held is not None and held.signature == version.signature:
            self._failures.pop(version.number, None)
            return held.folder
        root = self._make_root()
        where = f"{self.url.text}/{version.number}"
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{version.number}.partial-", dir=root))
        except OSError as error:
            raise status_error(StatusCode.FILESYSTEM_ERROR, f"{root}: {error}") from None
        log.info("Downloading model %s version %s to %s", self.model, where, staging)
        try:
            for path, stored in version.files:
                target = staging / path
                if self._closed:  # closed while this fetch ran in its worker thread
                    raise status_error(StatusCode.FILESYSTEM_ERROR, f"{where}: server stopping")
                # Inside the 0700 staging folder: the parents' own modes do not matter.
                target.parent.mkdir(parents=True, exist_ok=True)
                store.fetch(self.url, stored, target)
            folder = self._free_name(root, version.number)
            os.rename(staging, folder)
        except BaseException as error:
            shutil.rmtree(staging, ignore_errors=True)
            if isinstance(error, OSError):
                raise status_error(StatusCode.FILESYSTEM_ERROR, f"{where}: {error}") from None
            raise
        if held is not None:
            self._older.append(held.folder)
        self._current[version.number] = Copy(folder, version.signature)
        self._failures.pop(version.number, None)
        return folder

    def new_failure(self, number: int, message: str) -> bool:
        """Record ``message`` as version ``number``'s last failed fetch; False when it was
        the last one already (so a failure is logged once, not on every poll)."""
        new = self._failures.get(number) != message
        self._failures[number] = message
        return new

    def retain(self, live: Collection[int], used: Collection[Path]) -> None:
        """Delete the copies of versions not ``live`` and the replaced copies no ``used`` model
        file lies in."""
        for number in [n for n in self._current if n not in live]:
            copy = self._current.pop(number)
            if not _holds_any(copy.folder, used):
                _delete(copy.folder)
            else:
                self._older.append(copy.folder)
        kept = []
        for folder in self._older:
            if _holds_any(folder, used):
                kept.append(folder)
            else:
                _delete(folder)
        self._older = kept

    def close(self) -> None:
        """Delete every copy and the mirror's folder."""
        self._closed = True
        self._current.clear()
        self._older.clear()
        if self._root is not None:
            _delete(self._root)
            self._root = None

    def _make_root(self) -> Path:
        if self._closed:
            raise status_error(StatusCode.FILESYSTEM_ERROR, f"{self.url.text}: server stopping")
        if self._root is None:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.model)
            try:
                self._root = Path(tempfile.mkdtemp(prefix=f"ovmsx-{safe[:40]}-"))
            except OSError as error:
                raise status_error(StatusCode.FILESYSTEM_ERROR, str(error)) from None
        return self._root

    def _free_name(self, root: Path, number: int) -> Path:
        folder, again = root / str(number), 1
        while folder.exists():  # an older copy of this version may still serve
            again += 1
            folder = root / f"{number}.{again}"
        return folder


def _holds_any(folder: Path, used: Collection[Path]) -> bool:
    return any(path == folder or path.is_relative_to(folder) for path in used)


def _delete(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
