"""ImageFrame: what an ``IMAGE``-tagged graph stream carries (MediaPipe's ImageFrame).

An HWC image: a Tensor of shape ``[height, width, channels]`` and the MediaPipe pixel format
that the request's datatype and channel count select (COMPAT §4.2). The Tensor is a view of the
request's bytes; ``numpy()`` is a view of that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ovmsx import _core

# (KServe datatype, channels) -> MediaPipe ImageFormat, as OVMS maps a request to an ImageFrame.
INPUT_FORMATS: dict[tuple[str, int], str] = {
    ("FP32", 1): "VEC32F1", ("FP32", 2): "VEC32F2", ("FP32", 4): "VEC32F4",
    ("UINT8", 1): "GRAY8", ("UINT8", 3): "SRGB", ("UINT8", 4): "SRGBA",
    ("INT8", 1): "GRAY8", ("INT8", 3): "SRGB", ("INT8", 4): "SRGBA",
    ("UINT16", 1): "GRAY16", ("UINT16", 3): "SRGB48", ("UINT16", 4): "SRGBA64",
    ("INT16", 1): "GRAY16", ("INT16", 3): "SRGB48", ("INT16", 4): "SRGBA64",
    ("FP16", 1): "GRAY16", ("FP16", 3): "SRGB48", ("FP16", 4): "SRGBA64",
}  # fmt: skip

# MediaPipe ImageFormat -> (KServe datatype of a response, channels).
FORMAT_LAYOUT: dict[str, tuple[str, int]] = {
    "GRAY8": ("UINT8", 1), "SRGB": ("UINT8", 3), "SRGBA": ("UINT8", 4),
    "GRAY16": ("UINT16", 1), "SRGB48": ("UINT16", 3), "SRGBA64": ("UINT16", 4),
    "VEC32F1": ("FP32", 1), "VEC32F2": ("FP32", 2), "VEC32F4": ("FP32", 4),
}  # fmt: skip

_NUMPY = {"UINT8": np.uint8, "UINT16": np.uint16, "FP32": np.float32}


@dataclass(frozen=True)
class ImageFrame:
    """An image in HWC layout; ``format`` is a MediaPipe ImageFormat name (``"SRGB"``, …)."""

    format: str
    tensor: _core.Tensor

    @property
    def height(self) -> int:
        return self.tensor.shape[0]

    @property
    def width(self) -> int:
        return self.tensor.shape[1]

    @property
    def channels(self) -> int:
        return self.tensor.shape[2]

    def numpy(self) -> np.ndarray:
        """The pixels as an ``[H, W, C]`` array in the format's own type (a view)."""
        datatype, _ = FORMAT_LAYOUT[self.format]
        return np.frombuffer(self.tensor, dtype=_NUMPY[datatype]).reshape(self.tensor.shape)

    @classmethod
    def from_array(cls, pixels: np.ndarray, format: str | None = None) -> ImageFrame:
        """An ImageFrame over an ``[H, W, C]`` uint8/uint16/float32 array (no copy when it is
        C-contiguous); the format follows the dtype and channel count unless given."""
        if pixels.ndim != 3:
            raise ValueError(f"an image is [height, width, channels], not {list(pixels.shape)}")
        datatype = {np.dtype(np.uint8): "UINT8", np.dtype(np.uint16): "UINT16",
                    np.dtype(np.float32): "FP32"}.get(pixels.dtype)  # fmt: skip
        found = INPUT_FORMATS.get((datatype or "", pixels.shape[2]))
        if format is None and found is None:
            raise ValueError(
                f"no image format holds {pixels.dtype} with {pixels.shape[2]} channels"
            )
        return cls(format or found, _core.Tensor("image", np.ascontiguousarray(pixels)))

    def to_tensor(self, name: str) -> _core.Tensor:
        """The response tensor: ``[H, W, C]`` in the format's datatype (a view)."""
        datatype, _ = FORMAT_LAYOUT.get(self.format, ("UINT8", 0))
        return _core.Tensor._from_raw(name, self.tensor, list(self.tensor.shape), datatype)
