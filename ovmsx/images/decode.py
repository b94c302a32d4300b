"""Decoding encoded images with OpenCV, the way OVMS does (``cv::imdecode``, ``IMREAD_UNCHANGED``).

OpenCV is OVMS's own decoder, so its pixels are OVMS's pixels; of the decoders measured
(bench/bench_images.py, docs/performance.md "Encoded images") it is also as fast as the fastest,
simplejpeg, which reads JPEG only. What comes
out is what the file holds: BGR (BGRA with alpha) or one gray channel, 8 or 16 bits, with no
colour conversion or scaling.

OpenCV releases the GIL while it decodes, so the images of a batch decode in parallel: a share
on the calling thread and a share on each thread of a small pool; a single image decodes on the
calling thread alone, sparing the hand-off.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import TypeVar

import cv2
import numpy as np

# OVMS's OpenCV is built without TIFF (and OpenEXR, which OpenCV's wheels leave off unless
# asked): such files fail to parse there, so they do here too.
_TIFF_MAGIC = (b"II*\x00", b"MM\x00*")
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")

_WORKERS = max(2, os.cpu_count() or 1)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def decode(data: memoryview) -> np.ndarray | None:
    """One image as an ``[H, W, C]`` array (C = 1, 3 or 4; uint8 or uint16 as stored), or
    None when it is no image OpenCV can read."""
    if len(data) < 4 or bytes(data[:4]) in _TIFF_MAGIC:
        return None
    if bytes(data[:8]) == _PNG_MAGIC and not _png_chunks_fit(data):
        return None
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    except cv2.error:  # OpenCV refuses some damaged headers with an exception
        return None
    if image is None:
        return None
    return image if image.ndim == 3 else image[:, :, np.newaxis]


def _png_chunks_fit(data: memoryview) -> bool:
    """Whether each chunk of a PNG file (a 4-byte big-endian length, type, data, CRC) fits in
    the data, up to IEND. OpenCV's PNG reader allocates a chunk's declared length before it
    reads the chunk: a few hundred bytes declaring a 2 GiB chunk would cost 2 GiB of memory,
    only to fail for want of the data."""
    offset, size = len(_PNG_MAGIC), len(data)
    while offset + 8 <= size:
        end = offset + 12 + int.from_bytes(data[offset : offset + 4], "big")
        if end > size:
            return False
        if data[offset + 4 : offset + 8] == b"IEND":
            break
        offset = end
    return True


def decode_all(images: Sequence[memoryview]) -> list[np.ndarray | None]:
    """Each image decoded (``decode``), in order, a share of them on each core. A share stops
    at its first image that fails to decode, leaving the rest None: the earliest failure is
    the request's answer, so nothing after it is ever looked at (and a request of a million
    empty elements costs a few failed decodes, not a million)."""
    return in_shares(_decode_until_failure, images)


def _decode_until_failure(images: Sequence[memoryview]) -> list[np.ndarray | None]:
    decoded: list[np.ndarray | None] = []
    for data in images:
        image = decode(data)
        decoded.append(image)
        if image is None:
            break
    return decoded + [None] * (len(images) - len(decoded))


def in_shares(
    work: Callable[[Sequence[_Item]], list[_Result]], items: Sequence[_Item]
) -> list[_Result]:
    """``work`` over contiguous shares of ``items``, one per core, the results in order. The
    first share runs on the calling thread, the others on the pool; ``work`` must release the
    GIL for this to pay (OpenCV does)."""
    parts = min(len(items), _WORKERS)
    if parts <= 1:
        return work(items)
    bounds = [len(items) * part // parts for part in range(parts + 1)]
    shares = [items[start:end] for start, end in pairwise(bounds)]
    pool = _executor()
    others = [pool.submit(work, share) for share in shares[1:]]
    results = work(shares[0])
    for future in others:
        results += future.result()
    return results


def _executor() -> ThreadPoolExecutor:
    """One pool for the process, made on first use. Decoding is CPU-bound and runs without
    the GIL, so the calling thread and the pool's threads make one thread per core."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_WORKERS - 1, thread_name_prefix="ovmsx-images")
        return _pool
