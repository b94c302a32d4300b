"""Listed objects, grouped into a model's versions, and which of them a local copy takes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ovmsx.servables.model_files import is_version_name

# The files OVMS copies from a cloud version folder; everything else stays in the store.
_ACCEPTED_SUFFIXES = (
    ".bin",
    ".onnx",
    ".xml",
    "mapping_config.json",
    ".pdiparams",
    ".pdmodel",
    ".pb",
    ".tflite",
)
# Beyond OVMS: ovmsx's local loader reads a TensorFlow SavedModel as its folder
# (saved_model.pb beside variables/), so a copy takes the variables too, or the folder a
# local repository serves would fail to load from a bucket.
_SAVED_MODEL_VARIABLES = "variables/"


@dataclass(frozen=True)
class StoredObject:
    """One object as the store lists it."""

    key: str
    tag: str
    """Changes whenever the object's bytes do: S3's ETag, GCS's generation."""
    size: int


@dataclass(frozen=True)
class VersionObjects:
    """The objects of one version folder that a local copy takes."""

    number: int
    files: tuple[tuple[str, StoredObject], ...]
    """(path inside the version folder, object), sorted by path."""

    @property
    def signature(self) -> tuple:
        """What the version holds in the store: equal signatures, equal bytes."""
        return tuple((path, stored.tag, stored.size) for path, stored in self.files)


def accepted(path: str) -> bool:
    """Whether a file at ``path`` (inside a version folder) belongs in the local copy. A key
    is any string: one whose path would climb out of the folder (``..``) or is not a plain
    relative path is never written."""
    if any(part in ("", ".", "..") for part in path.split("/")):
        return False
    return path.endswith(_ACCEPTED_SUFFIXES) or path.startswith(_SAVED_MODEL_VARIABLES)


def group_versions(
    listed: Iterable[StoredObject], key_prefix: str
) -> tuple[dict[int, VersionObjects], list[str]]:
    """``({version: objects}, names of other folders)`` under ``key_prefix``.

    Stores have no folders: a version folder is a key prefix ``<key_prefix><n>/`` with at
    least one object below it (OVMS counts a folder the same way). ``n`` is a positive
    integer, as for local version folders; other names are returned to be warned about.
    """
    by_number: dict[int, list[tuple[str, StoredObject]]] = {}
    others: set[str] = set()
    for stored in listed:
        rest = stored.key[len(key_prefix) :]
        folder, slash, path = rest.partition("/")
        if not slash:
            continue  # a file beside the version folders
        if not is_version_name(folder):
            others.add(folder)
            continue
        files = by_number.setdefault(int(folder), [])
        if accepted(path):
            files.append((path, stored))
    versions = {
        n: VersionObjects(n, tuple(sorted(files, key=lambda f: f[0])))
        for n, files in by_number.items()
    }
    return versions, sorted(others)
