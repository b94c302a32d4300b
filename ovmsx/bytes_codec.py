"""Strings in tensors: the KServe BYTES layout and the custom-node padded form.

KServe BYTES (what tritonclient sends in ``raw_input_contents`` and what OVMS hands Python nodes
for ``bytes_contents``): every element is a 4-byte little-endian length followed by its bytes::

    pack([b"ab", b"c"]) == b"\\x02\\x00\\x00\\x00ab\\x01\\x00\\x00\\x00c"

Custom-node string form: a 2-D ``UINT8`` tensor ``[N, longest + 1]``, one zero-padded row per
element. Rows end at their first zero byte, so elements containing ``\\x00`` do not survive it.

Elements may be ``bytes``, ``str`` (encoded as UTF-8), any contiguous buffer, or a numpy array
of ``bytes``/``str``/``object``. Malformed buffers raise ``ValueError`` (an
:class:`ovmsx.status.InvalidArgumentError`) naming the element and byte offset; decoding never
reads outside the buffer. The loops run in C++.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ovmsx import _core

if TYPE_CHECKING:
    from typing import TypeAlias

    from typing_extensions import Buffer

    from ovmsx._core import Tensor

    Element: TypeAlias = "bytes | str | Buffer"

__all__ = ["from_padded", "pack", "to_padded", "unpack", "unpack_views"]


def _elements(items: Iterable[Element] | np.ndarray) -> Iterable[Element]:
    # numpy arrays of strings export no usable buffer per element; their items as a list do.
    if isinstance(items, np.ndarray):
        if items.dtype.kind not in "SUO":
            raise TypeError(f"BYTES elements must be bytes, str or object; got dtype {items.dtype}")
        return items.ravel().tolist()
    return items


def pack(items: Iterable[Element] | np.ndarray) -> bytes:
    """Pack elements into one KServe BYTES buffer."""
    return _core.bytes_pack(_elements(items))


def unpack(buffer: Buffer, count: int | None = None) -> list[bytes]:
    """The elements of a KServe BYTES buffer, as copies.

    If ``count`` is given (the product of the tensor shape), a buffer holding another number of
    elements raises ``ValueError`` with status ``INVALID_VALUE_COUNT``.
    """
    return _core.bytes_unpack(buffer, count)


def unpack_views(buffer: Buffer, count: int | None = None) -> list[memoryview]:
    """Like :func:`unpack`, but each element is a zero-copy ``memoryview`` into ``buffer``."""
    return _core.bytes_unpack_views(buffer, count)


def to_padded(items: Iterable[Element] | np.ndarray, name: str = "") -> Tensor:
    """A ``UINT8`` Tensor ``[N, longest + 1]`` holding one zero-padded element per row."""
    return _core.bytes_to_padded(_elements(items), name)


def from_padded(buffer: Buffer) -> list[bytes]:
    """The elements of a 2-D padded buffer: each row up to its first zero byte."""
    return _core.bytes_from_padded(buffer)
