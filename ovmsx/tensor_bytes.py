"""A tensor's data as one run of bytes, for code that moves bytes rather than elements."""

from __future__ import annotations

from ovmsx import _core

_NO_BYTES = memoryview(b"")


def raw_bytes(tensor: _core.Tensor) -> memoryview:
    """A 1-D unsigned-byte view of ``tensor``'s data (a view, not a copy). A tensor with a zero
    dimension ([0, 10], [2, 0]) gives an empty view: ``memoryview.cast`` refuses such a shape."""
    view = memoryview(tensor)
    if view.format == "B" and view.ndim == 1:
        return view
    return view.cast("B") if view.nbytes else _NO_BYTES
