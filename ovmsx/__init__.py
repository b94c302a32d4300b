"""ovmsx: a pip-installable, drop-in re-implementation of OpenVINO Model Server."""

from importlib.metadata import version as _version

from ovmsx._core import Tensor
from ovmsx.status import StatusCode, StatusError

__version__ = _version("ovmsx")

__all__ = ["StatusCode", "StatusError", "Tensor", "__version__"]
