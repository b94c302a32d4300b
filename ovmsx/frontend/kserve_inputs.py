"""KServe v2 request inputs: raw bytes (zero-copy views) or typed ``contents``.

A ``KServeInput`` is checked against the model by the servable (``RequestInput`` protocol);
only then does it become a Tensor, so a request announcing a huge shape with little data is
refused before anything is allocated.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ovmsx import _core
from ovmsx.datatypes import element_size
from ovmsx.quoting import quote, quote_shape
from ovmsx.status import StatusCode, status_error

# Which InferTensorContents field carries a datatype, the numpy type that holds the field's
# values, and the datatype's own numpy type. Narrow integers travel in 32-bit fields and are
# cast with wrap-around, as OVMS does. FP16 and BF16 have no field: like OVMS, ovmsx takes
# them only as raw bytes.
_TYPED_FIELD: dict[str, tuple[str, type, type]] = {
    "BOOL": ("bool_contents", np.bool_, np.bool_),
    "INT8": ("int_contents", np.int64, np.int8),
    "INT16": ("int_contents", np.int64, np.int16),
    "INT32": ("int_contents", np.int32, np.int32),
    "INT64": ("int64_contents", np.int64, np.int64),
    "UINT8": ("uint_contents", np.uint64, np.uint8),
    "UINT16": ("uint_contents", np.uint64, np.uint16),
    "UINT32": ("uint_contents", np.uint32, np.uint32),
    "UINT64": ("uint64_contents", np.uint64, np.uint64),
    "FP32": ("fp32_contents", np.float32, np.float32),
    "FP64": ("fp64_contents", np.float64, np.float64),
}


class PackedStrings(NamedTuple):
    """An input's ``bytes_contents``, cut out of the request before protobuf parses it: how
    many elements, and all of them in the KServe BYTES layout."""

    count: int
    data: bytes


class KServeInput:
    """One ``InferInputTensor`` with its data: a view of ``raw_input_contents`` or ``contents``."""

    __slots__ = ("_contents", "_raw", "_strings", "datatype", "name", "shape")

    def __init__(
        self,
        name: str,
        datatype: str,
        shape: tuple[int, ...],
        raw,
        contents,
        strings: PackedStrings | None = None,
    ) -> None:
        self.name = name
        self.datatype = datatype
        self.shape = shape
        self._raw = raw  # memoryview into the request message, or None
        self._contents = contents  # InferTensorContents, or None
        self._strings = strings  # its bytes_contents, if it had any

    @property
    def is_raw(self) -> bool:
        """Whether the data came in ``raw_input_contents``."""
        return self._raw is not None

    def packed_bytes(self) -> tuple[memoryview | bytes, int | None]:
        """BYTES data in the KServe layout, and its element count when it came element by
        element (``bytes_contents``); None for ``raw_input_contents``, not yet framed."""
        if self._raw is not None:
            return self._raw, None
        strings = self._strings or PackedStrings(0, b"")
        return strings.data, strings.count

    def to_tensor(self, model_datatype: str, element_count: int) -> _core.Tensor:
        if self._raw is not None:
            return self._raw_tensor(model_datatype, element_count)
        return self._typed_tensor(model_datatype, element_count)

    def to_graph_tensor(self, python: bool) -> _core.Tensor:
        """The data as a graph input packet. ``python`` (OVMS_PY_TENSOR tags) follows the
        pyovms rules: raw contents are taken as they are, whatever the datatype (BYTES keeps
        its length prefixes, custom datatypes are 1-D bytes); otherwise the datatype must be a
        KServe one and the data must fit it."""
        if any(dim < 0 for dim in self.shape):
            raise status_error(
                StatusCode.INVALID_SHAPE,
                f"Negative dimension size is not acceptable: {quote_shape(self.shape)}; "
                f"input name: {quote(self.name)}",
            )
        # Python nodes get BF16 the way OVMS gives it to them: as a custom datatype, since
        # pyovms has no buffer format for it.
        itemsize = _core.datatype_itemsize(self.datatype) if python else element_size(self.datatype)
        known = self.datatype == "BYTES" or itemsize is not None
        if not known and not (python and self._raw is not None):
            raise status_error(
                StatusCode.INVALID_PRECISION,
                f"Provided datatype is invalid, custom datatypes are allowed only when "
                f"raw_input_contents is used; input name: {quote(self.name)}",
            )
        count = math.prod(self.shape)
        if self._raw is not None:
            return self._raw_tensor(self.datatype, count, itemsize)
        if self.datatype != "BYTES" and self.datatype not in _TYPED_FIELD:
            raise status_error(
                StatusCode.NOT_IMPLEMENTED,
                f"{quote(self.datatype)} data must come in raw_input_contents; "
                f"input name: {quote(self.name)}",
            )
        return self._typed_tensor(self.datatype, count)

    def _raw_tensor(self, datatype: str, count: int, itemsize: int | None = None) -> _core.Tensor:
        # Python integers cannot overflow, so the expected size is exact even for shapes whose
        # byte size exceeds 64 bits (OVMS reports those as a size mismatch, too). BYTES elements
        # are counted when the C++ core unpacks them for the model.
        itemsize = itemsize or _core.datatype_itemsize(datatype)
        if itemsize is not None and len(self._raw) != count * itemsize:
            raise status_error(
                StatusCode.INVALID_CONTENT_SIZE,
                f"Expected: {count * itemsize} bytes; Actual: {len(self._raw)} bytes; "
                f"input name: {quote(self.name)}",
            )
        return _core.Tensor._from_raw(self.name, self._raw, list(self.shape), self.datatype)

    def _typed_tensor(self, datatype: str, count: int) -> _core.Tensor:
        contents = self._contents
        if datatype == "BYTES":
            # Counted before anything is built; the packed elements are used as they are.
            strings = self._strings or PackedStrings(0, b"")
            _check_value_count(strings.count, count, self.name)
            data = strings.data
        else:
            field, stored, dtype = _TYPED_FIELD.get(datatype, ("", np.uint8, np.uint8))
            values = getattr(contents, field) if field and contents is not None else ()
            _check_value_count(len(values), count, self.name)
            data = np.asarray(values, dtype=stored).astype(dtype, copy=False)
        return _core.Tensor._from_raw(self.name, data, list(self.shape), self.datatype)


def _check_value_count(actual: int, expected: int, name: str) -> None:
    if actual != expected:
        raise status_error(
            StatusCode.INVALID_VALUE_COUNT,
            f"Expected: {expected} values; Actual: {actual} values; input name: {quote(name)}",
        )
