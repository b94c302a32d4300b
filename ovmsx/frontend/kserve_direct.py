"""ModelInfer for a quick model without Python per request: the C++ core reads the request,
runs the inference and writes the response (csrc/core/kserve_direct_infer.h).

Only the routing stays here, so versions, states and reloads keep one source of truth (the
registry). The core declines anything but a plain, valid request; the general path
(kserve_codec + registry) then answers it, errors included.
"""

from __future__ import annotations

from ovmsx import _core
from ovmsx.servables.model import parse_version
from ovmsx.servables.registry import ServableRegistry
from ovmsx.status import StatusError


def answer_direct(registry: ServableRegistry, message: bytes) -> bytes | None:
    """The serialized response when a quick model can answer ``message`` at once, on this
    thread; None when the general path should take it."""
    target = _core.infer_target(message)
    if target is None:
        return None
    name, version_text = target
    model = registry.models.get(name)
    if model is None:
        return None
    try:
        version = model.serving_version(parse_version(version_text))
    except StatusError:
        return None  # the general path words the error
    compiled = version.compiled
    if compiled is None or not compiled.quick:
        return None
    return compiled.direct.answer(message)
