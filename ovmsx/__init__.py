"""ovmsx: a pip-installable, drop-in re-implementation of OpenVINO Model Server."""

from importlib.metadata import version as _version

try:
    from ovmsx._core import Tensor
except ModuleNotFoundError as _missing:
    if _missing.name != "ovmsx._core":
        raise
    # The usual cause: Python found the source tree (the current directory comes first on
    # sys.path) before the installed package, and the compiled core lives only in the latter.
    raise ModuleNotFoundError(
        f"ovmsx's compiled core (ovmsx._core) is not in {__path__[0]}. Python imported ovmsx "
        "from that folder, which looks like a source tree: running from the repository root, "
        "the folder shadows the installed package. Run from another folder, or install the "
        "tree in editable mode (pip install -e .) so that the core is built for it.",
        name="ovmsx._core",
    ) from _missing

from ovmsx.status import StatusCode, StatusError

__version__ = _version("ovmsx")

__all__ = ["StatusCode", "StatusError", "Tensor", "__version__"]
