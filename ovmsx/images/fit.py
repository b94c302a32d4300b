"""Fitting decoded images to an image endpoint, by OVMS's rules.

Per image, in order: it must have parsed; without resize support it must have the first
image's resolution; its channels must match the endpoint's (the first image's when the
endpoint takes any); the endpoint precision must be one OpenCV converts to. Then the image is
cast to that precision (a plain cast with saturation, as ``cv::Mat::convertTo``: no scaling)
and, if its size differs from the target, resized bilinearly (``cv::resize``'s default).

The target size comes from the endpoint dimension and the first image: a fixed size as it is,
a dimension of any size takes the image's, a range takes the image's clamped into it.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from ovmsx.images.endpoint import ImageEndpoint, is_any
from ovmsx.status import StatusCode, StatusError, status_error

# The precisions OVMS converts decoded images to; any other one is INVALID_PRECISION.
NUMPY_TYPES: dict[str, type] = {
    "FP32": np.float32,
    "FP64": np.float64,
    "FP16": np.float16,
    "INT16": np.int16,
    "UINT8": np.uint8,
    "INT8": np.int8,
    "UINT16": np.uint16,
    "INT32": np.int32,
}
# Depths cv2.resize interpolates; the others are resized in FP32 and cast back.
_RESIZABLE_DEPTHS = frozenset({np.uint8, np.uint16, np.int16, np.float32, np.float64})


class Plan(NamedTuple):
    """What every image of a request becomes."""

    height: int
    width: int
    channels: int
    dtype: type


def _target(bounds: tuple[int, int], size: int) -> int:
    low, high = bounds
    if is_any(bounds):
        return max(size, low)
    return min(max(size, low), high)


def plan(endpoint: ImageEndpoint, images: list[np.ndarray | None]) -> Plan | StatusError:
    """The size, channels and type of the endpoint's tensor, or the first image's failure."""
    name = endpoint.name
    first = images[0]
    if first is None:
        return _unparsable(0, name)
    dtype = NUMPY_TYPES.get(endpoint.datatype)
    height = _target(endpoint.height, first.shape[0])
    width = _target(endpoint.width, first.shape[1])
    for index, image in enumerate(images):
        if image is None:
            return _unparsable(index, name)
        if not endpoint.resizable and image.shape[:2] != first.shape[:2]:
            return status_error(
                StatusCode.BINARY_IMAGES_RESOLUTION_MISMATCH,
                f"image {index} is {_size(image)}, image 0 is {_size(first)}; input name: {name}",
            )
        wanted, channels = endpoint.channels, image.shape[2]
        if is_any(wanted):  # the first image sets the channels of the batch
            wanted = (first.shape[2], first.shape[2])
        if not wanted[0] <= channels <= wanted[1]:
            return status_error(
                StatusCode.INVALID_NO_OF_CHANNELS,
                f"Expected: {_bounds_text(wanted)}; Actual: {channels} in image {index}; "
                f"input name: {name}",
            )
        if dtype is None:
            return status_error(
                StatusCode.INVALID_PRECISION,
                f"images cannot be converted to {endpoint.datatype}; input name: {name}",
            )
        if image.shape[:2] != (height, width) and not endpoint.resizable:
            return status_error(
                StatusCode.INVALID_SHAPE,
                f"image {index} is {_size(image)}, the input takes {height}x{width} "
                f"(layout {endpoint.layout}); images are resized only for layouts NHWC and "
                f"N?HWC with no dimension of any size; input name: {name}",
            )
    assert dtype is not None  # every image passed the precision check
    return Plan(height, width, first.shape[2], dtype)


def _unparsable(index: int, name: str) -> StatusError:
    return status_error(
        StatusCode.IMAGE_PARSING_FAILED,
        f"image {index} is no JPEG or PNG that can be decoded; input name: {name}",
    )


def _size(image: np.ndarray) -> str:
    return f"{image.shape[0]}x{image.shape[1]}"


def _bounds_text(bounds: tuple[int, int]) -> str:
    low, high = bounds
    return str(low) if low == high else f"[{low}~{high}]"


def _saturated(image: np.ndarray, dtype: type) -> np.ndarray:
    """``image`` with values above ``dtype``'s range lowered to its top (decoded images are
    unsigned, so only the top can be exceeded), still in its own type."""
    if np.issubdtype(dtype, np.integer):
        top = np.iinfo(dtype).max
        if np.iinfo(image.dtype).max > top:
            return np.minimum(image, top)
    return image


def fit_into(image: np.ndarray, target: Plan, out: np.ndarray) -> None:
    """``image`` cast to the plan's type and, if its size differs, resized, written into
    ``out`` (one image's ``[H, W, C]`` of the request's tensor). Without a resize the cast
    writes straight into ``out``: one pass over the pixels."""
    image = _saturated(image, target.dtype)
    if image.shape[:2] == (target.height, target.width):
        np.copyto(out, image, casting="unsafe")
        return
    size = (target.width, target.height)  # OpenCV sizes are (width, height)
    if target.dtype in _RESIZABLE_DEPTHS:
        resized = cv2.resize(image.astype(target.dtype, copy=False), size)
    else:
        resized = _cast_rounded(cv2.resize(image.astype(np.float32), size), target.dtype)
    out[...] = resized.reshape(out.shape)


def _cast_rounded(image: np.ndarray, dtype: type) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        limits = np.iinfo(dtype)
        image = np.clip(np.rint(image), limits.min, limits.max)
    return image.astype(dtype)
