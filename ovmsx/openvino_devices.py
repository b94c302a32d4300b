"""The devices OpenVINO can use here, for the startup log line OVMS writes.

Asked through OpenVINO's C API (``libopenvino_c``, shipped in the openvino wheel beside the
library ``_core`` links): a few milliseconds, where importing OpenVINO's Python API only to ask
would add a quarter of a second to every start.
"""

from __future__ import annotations

import ctypes
import importlib.util
from pathlib import Path


class _Devices(ctypes.Structure):
    # ov_available_devices_t (openvino/c/ov_core.h)
    _fields_ = (("devices", ctypes.POINTER(ctypes.c_char_p)), ("size", ctypes.c_size_t))


def _c_library() -> ctypes.CDLL:
    spec = importlib.util.find_spec("openvino")
    if spec is None or spec.origin is None:
        raise OSError("the openvino package is not installed")
    found = sorted((Path(spec.origin).parent / "libs").glob("libopenvino_c.so*"))
    if not found:
        raise OSError("libopenvino_c is not in the openvino package")
    return ctypes.CDLL(str(found[0]))


def available_devices() -> list[str]:
    """OpenVINO's available devices (``CPU``, ``GPU.0``, ...); raises ``OSError`` when they
    cannot be listed."""
    library = _c_library()
    core = ctypes.c_void_p()
    if library.ov_core_create(ctypes.byref(core)) != 0:
        raise OSError("ov_core_create failed")
    devices = _Devices()
    try:
        if library.ov_core_get_available_devices(core, ctypes.byref(devices)) != 0:
            raise OSError("ov_core_get_available_devices failed")
        names = [devices.devices[i].decode() for i in range(devices.size)]
        library.ov_available_devices_free(ctypes.byref(devices))
        return names
    finally:
        library.ov_core_free(core)
