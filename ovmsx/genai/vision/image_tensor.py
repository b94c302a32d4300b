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


class ImageDecodeError(ValueError):
    """Bytes that are no image OVMS reads (a 400, with its message)."""


def image_tensor(data: bytes) -> np.ndarray:
    image = decode(memoryview(data))
    if image is None:
        raise ImageDecodeError(PARSING_FAILED)
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    elif image.dtype != np.uint8:
        raise ImageDecodeError(PARSING_FAILED)
    channels = image.shape[2]
    if channels == 1:
        rgb = cv2.cvtColor(image, cv2.COLOR_GRAY2RGB)
    elif channels == 3:
        rgb = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    elif channels == 4:
        rgb = cv2.cvtColor(image, cv2.COLOR_BGRA2RGB)
    else:
        raise ImageDecodeError(PARSING_FAILED)
    return np.ascontiguousarray(rgb)[np.newaxis]
