"""JPEG and PNG files written with OpenCV, and what the server should make of them, worked out
by hand: OpenCV's own decoding (OVMS's decoder), then the cast and the bilinear resize."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

# 4:4:4 keeps full colour resolution; 4:2:0 (the usual) halves it both ways.
SAMPLING_444 = [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444]
SAMPLING_420 = [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420]


def picture(height: int, width: int, channels: int = 3, seed: int = 0, bits: int = 8) -> np.ndarray:
    """A smooth picture with some noise: gradients that resizing changes visibly."""
    rng = np.random.default_rng(seed)
    top = 255 if bits == 8 else 65535
    rows = np.linspace(0, 1, height)[:, None, None]
    cols = np.linspace(0, 1, width)[None, :, None]
    tint = np.linspace(0.2, 1, channels)[None, None, :]
    smooth = (rows * 0.6 + cols * 0.4) * tint * top * 0.8
    noisy = smooth + rng.uniform(0, top * 0.15, (height, width, channels))
    image = noisy.astype(np.uint8 if bits == 8 else np.uint16)
    return image[:, :, 0] if channels == 1 else image


def jpeg(image: np.ndarray, sampling: list[int] = SAMPLING_420) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90, *sampling])
    assert ok
    return data.tobytes()


def png(image: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".png", image)
    assert ok
    return data.tobytes()


def written(folder: Path, name: str, data: bytes) -> Path:
    """``data`` as a file, read back by the tests as a client would send it from disk."""
    path = folder / name
    path.write_bytes(data)
    return path


def decoded(data: bytes) -> np.ndarray:
    """The file as OpenCV decodes it, always ``[H, W, C]``."""
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    assert image is not None
    return image if image.ndim == 3 else image[:, :, None]


def bilinear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """``image`` resized by plain bilinear interpolation, written out in numpy with OpenCV's
    pixel-centre convention (source = (target + 0.5) * scale - 0.5, clamped to the edges)."""

    def axis(target: int, source: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        position = (np.arange(target) + 0.5) * (source / target) - 0.5
        position = np.clip(position, 0, source - 1)
        low = np.floor(position).astype(int)
        return low, np.minimum(low + 1, source - 1), position - low

    top, bottom, down = axis(height, image.shape[0])
    left, right, across = axis(width, image.shape[1])
    pixels = image.astype(np.float64)
    upper = pixels[top][:, left] * (1 - across[None, :, None])
    upper += pixels[top][:, right] * across[None, :, None]
    lower = pixels[bottom][:, left] * (1 - across[None, :, None])
    lower += pixels[bottom][:, right] * across[None, :, None]
    return upper * (1 - down[:, None, None]) + lower * down[:, None, None]


def expected(data: bytes, height: int, width: int, dtype: type = np.float32) -> np.ndarray:
    """What an image input of ``height`` x ``width`` in ``dtype`` holds for this file, as
    float64: the decoded pixels cast with saturation, then resized if the size differs."""
    image = decoded(data)
    if np.issubdtype(dtype, np.integer):
        image = np.minimum(image, np.iinfo(dtype).max)
    image = image.astype(dtype)
    if image.shape[:2] != (height, width):
        return bilinear(image, height, width)
    return image.astype(np.float64)
