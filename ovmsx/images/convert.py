"""A BYTES request input of encoded images -> the endpoint's image tensor.

Checks that need no decoding come first (``request_checks``: the request validator's, then
the conversion's); then every image decodes, several at a time (``decode``); then the images
are checked in order and the first failure is the answer (``fit.plan``); only then is the
output allocated and filled, each image cast and resized on the pool. A refused request keeps
nothing: the decoded images are dropped before the error is raised, so the error does not
hold them through its traceback.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ovmsx import _core
from ovmsx.images.decode import decode_all, in_shares
from ovmsx.images.endpoint import ImageEndpoint
from ovmsx.images.fit import Plan, fit_into, plan
from ovmsx.images.request_checks import (
    EncodedInput,
    Images,
    check_conversion,
    validated_images,
)


def image_conversion(endpoint: ImageEndpoint, given: EncodedInput) -> Callable[[], _core.Tensor]:
    """The request validator's checks of ``given`` now; the conversion (its own checks,
    decoding, fitting) when the result is called, which OVMS does once every input of the
    request has passed validation."""
    images = validated_images(endpoint, given)
    return lambda: _converted(endpoint, images)


def image_tensor(endpoint: ImageEndpoint, given: EncodedInput) -> _core.Tensor:
    """The images of ``given`` as one tensor ``[N, H, W, C]`` (``[N, 1, H, W, C]`` for a
    demultiplexed pipeline input) in the endpoint's datatype; ``StatusError`` with OVMS's code
    for the first thing wrong."""
    return image_conversion(endpoint, given)()


def _converted(endpoint: ImageEndpoint, images: Images) -> _core.Tensor:
    check_conversion(endpoint, images)
    decoded = decode_all(images.views)
    target = plan(endpoint, decoded)
    if not isinstance(target, Plan):
        decoded.clear()
        raise target
    count = len(decoded)
    middle = (1,) if endpoint.demultiplexed else ()
    shape = (count, *middle, target.height, target.width, target.channels)
    out = np.empty(shape, target.dtype)
    rows = out.reshape(count, target.height, target.width, target.channels)

    def fill(indices: range) -> list[None]:
        for index in indices:
            fit_into(decoded[index], target, rows[index])  # type: ignore[arg-type]  # all parsed
        return []

    in_shares(fill, range(count))
    return _core.Tensor._from_raw(endpoint.name, out, list(shape), endpoint.datatype)
