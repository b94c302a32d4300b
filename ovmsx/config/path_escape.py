"""OVMS's rule against local paths that climb with ``..``.

OVMS joins a relative path to the config file's folder and then refuses the result when it
starts with ``../``, ends with ``/..`` or holds ``/../`` (``FileSystem::isPathEscaped``):
PATH_INVALID, logged as "Path <path> escape with .. is forbidden." Joined to an absolute
folder, that is any path with a ``..`` component, which is what ``escapes`` checks. Custom-node
libraries, model base paths and graph paths (``base_path``, ``graph_path``, ``subconfig``)
are checked; the entry is refused and the rest of the config is served.
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
