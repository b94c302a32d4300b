"""An encoded image sent to a graph's ``IMAGE`` input, as the ImageFrame its calculator takes.

Beyond OVMS, whose graphs take only raw pixels on ``IMAGE`` inputs: one BYTES element holding
a JPEG or PNG file is decoded here (OpenCV, as for models) into an HWC frame. MediaPipe's
formats name the channel order, so the frame is RGB or RGBA (``SRGB``, ``SRGBA``, their 16-bit
forms) or gray, not the BGR that models get, and calculators written for MediaPipe see the
colours they expect. Values stay as decoded (8 or 16 bits, no scaling).
"""

from __future__ import annotations

import cv2
import numpy as np

from ovmsx import _core
from ovmsx.graph.image_frame import ImageFrame
from ovmsx.images.decode import decode
from ovmsx.images.request_checks import EncodedInput
from ovmsx.status import StatusCode, StatusError, status_error

# (numpy type, channels) of a decoded file -> MediaPipe ImageFormat.
_FORMATS = {
    (np.uint8, 1): "GRAY8", (np.uint8, 3): "SRGB", (np.uint8, 4): "SRGBA",
    (np.uint16, 1): "GRAY16", (np.uint16, 3): "SRGB48", (np.uint16, 4): "SRGBA64",
}  # fmt: skip
_TO_RGB = {3: cv2.COLOR_BGR2RGB, 4: cv2.COLOR_BGRA2RGBA}


def encoded_frame(given: EncodedInput) -> ImageFrame:
    """The frame of the one image in ``given`` (a BYTES input of shape [1])."""
    name = given.name
    if tuple(given.shape) != (1,):
        raise status_error(
            StatusCode.INVALID_SHAPE,
            f"an IMAGE input takes one encoded image, shape [1]; Actual: {list(given.shape)}; "
            f"input name: {name}",
        )
    buffer, count = given.packed_bytes()
    if count is not None and count != 1:
        raise status_error(
            StatusCode.INVALID_BATCH_SIZE,
            f"Expected: 1; Actual: {count}; input name: {name}",
        )
    try:
        views: list[memoryview] | str = _core.bytes_unpack_views(buffer, 1)
    except StatusError as error:  # framing or count: the client's data, said where it breaks
        views = error.details
    if isinstance(views, str):  # raised outside the handler: no chained error holds the data
        raise status_error(StatusCode.INVALID_INPUT_FORMAT, f"{views}; input name: {name}")
    (data,) = views
    if not len(data):
        raise status_error(StatusCode.BYTES_CONTENTS_EMPTY, f"image 0; input name: {name}")
    pixels = decode(data)
    if pixels is None:
        raise status_error(
            StatusCode.IMAGE_PARSING_FAILED, f"image 0 is no JPEG or PNG; input name: {name}"
        )
    channels = pixels.shape[2] if pixels.ndim == 3 else 1
    image_format = _FORMATS.get((pixels.dtype.type, channels))
    if image_format is None:
        raise status_error(
            StatusCode.INVALID_INPUT_FORMAT,
            f"no MediaPipe image format holds {pixels.dtype} pixels with {channels} channels; "
            f"input name: {name}",
        )
    if channels in _TO_RGB:
        pixels = cv2.cvtColor(pixels, _TO_RGB[channels])
    pixels = np.ascontiguousarray(pixels.reshape(pixels.shape[0], pixels.shape[1], channels))
    return ImageFrame(image_format, _core.Tensor(name, pixels))
