"""OVMS's rule against local paths that climb with ``..``.

OVMS joins a relative path to the config file's folder and then refuses the result when it
starts with ``../``, ends with ``/..`` or holds ``/../`` (``FileSystem::isPathEscaped``):
PATH_INVALID, logged as "Path <path> escape with .. is forbidden." Joined to an absolute
folder, that is any path with a ``..`` component, which is what ``escapes`` checks.

OVMS checks the paths it reads through its file-system layer: custom-node library paths and
model base paths, refused here too (the entry is refused, the rest of the config served). A
graph's ``base_path``, ``graph_path`` and ``subconfig`` are joined and opened as they are, so
``..`` in them is followed (``MediapipeConfig``).
"""

from __future__ import annotations

from ovmsx.status import StatusCode, StatusError, status_error


def escapes(path: str | None) -> bool:
    """Whether ``path`` has a ``..`` component (``..x`` or ``x..`` are plain names)."""
    return path is not None and ".." in path.split("/")


def escape_error(path: str, owner: str) -> StatusError:
    """PATH_INVALID for ``path`` of ``owner`` (e.g. "model resnet"), in OVMS's words."""
    return status_error(
        StatusCode.PATH_INVALID, f"{owner}: Path {path} escape with .. is forbidden"
    )


def refuse_escape(path: str | None, owner: str) -> None:
    """Raise ``escape_error`` when ``path`` climbs with ``..``."""
    if path is not None and escapes(path):
        raise escape_error(path, owner)
