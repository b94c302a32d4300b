"""ModelInfer for a model without Python per request: the C++ core reads the request, runs the
inference and writes the response (csrc/core/kserve_direct_infer.h) — on the calling thread
for a quick model, on OpenVINO's thread otherwise.

Only the routing stays here, so versions, states and reloads keep one source of truth (the
registry). The core declines anything but a plain, valid request; the general path
(kserve_codec + registry) then answers it, errors included.
"""

from __future__ import annotations

from ovmsx import _core
from ovmsx.servables.model import parse_version
from ovmsx.servables.model_version import ModelVersion
from ovmsx.servables.registry import ServableRegistry
from ovmsx.status import StatusError


def direct_target(registry: ServableRegistry, message: bytes) -> ModelVersion | None:
    """The model version ``message`` names, if it is available; None otherwise (the general
    path then words the error)."""
    target = _core.infer_target(message)
    if target is None:
        return None
    name, version_text = target
    model = registry.models.get(name)
    if model is None:
        return None
    try:
        return model.serving_version(parse_version(version_text))
    except StatusError:
        return None


def answer_direct(registry: ServableRegistry, message: bytes) -> bytes | None:
    """The serialized response when a quick model can answer ``message`` at once, on this
    thread; None when the general path should take it."""
    version = direct_target(registry, message)
    if version is None or version.compiled is None or not version.compiled.quick:
        return None
    return version.compiled.direct.answer(message)
