"""An image's bytes as the tensor openvino-genai's vision-language pipelines take: ``u8
[1, H, W, 3]``, RGB, whatever the file held (grey, alpha, 16 bits), as OVMS's stb_image decode
gives it. PNG, JPEG, BMP and GIF (its first frame) are read by OpenCV, through the project's
decoder (ovmsx/images/decode.py, which refuses PNG chunks that declare more than they hold
before OpenCV would allocate them)."""

from __future__ import annotations

import cv2
import numpy as np

from ovmsx.images.decode import decode

PARSING_FAILED = "Image parsing failed"
# OpenCV's channel orders (grey, BGR, BGRA) to RGB.
_TO_RGB = {1: cv2.COLOR_GRAY2RGB, 3: cv2.COLOR_BGR2RGB, 4: cv2.COLOR_BGRA2RGB}


class ImageDecodeError(ValueError):
    """Bytes that are no image OVMS reads (a 400, with its message)."""


def rgb_image(data: bytes) -> np.ndarray:
    image = decode(memoryview(data))
    if image is None or image.dtype not in (np.uint8, np.uint16):
        raise ImageDecodeError(PARSING_FAILED)
    conversion = _TO_RGB.get(image.shape[2])
    if conversion is None:
        raise ImageDecodeError(PARSING_FAILED)
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    return cv2.cvtColor(image, conversion)[np.newaxis]
