"""KServe v2 REST request inputs: JSON ``data`` or a slice of the binary tail.

A ``RestInput`` is the REST twin of ``kserve_inputs.KServeInput``: servables check it against
their inputs (the ``RequestInput`` protocol) and only then turn it into a Tensor, so both
protocols share one validation path and one set of messages. Binary data stays a view of the
request body; JSON data is converted once, when the request is read, into the datatype the
request names (so a value the datatype cannot hold is refused before anything runs).
"""

from __future__ import annotations

import math

import numpy as np

from ovmsx import _core, bytes_codec
from ovmsx.datatypes import element_size
from ovmsx.frontend.kserve_inputs import PackedStrings
from ovmsx.quoting import quote
from ovmsx.status import StatusCode, status_error

# JSON values a numeric datatype takes: numpy's kind of the parsed list ("b" bool, "i"/"u"
# integers, "f" floats). Integers must fit the datatype; floats are rounded to it, as OVMS does.
_NUMERIC: dict[str, tuple[type, str]] = {
    "BOOL": (np.bool_, "b"),
    "INT8": (np.int8, "iu"),
    "INT16": (np.int16, "iu"),
    "INT32": (np.int32, "iu"),
    "INT64": (np.int64, "iu"),
    "UINT8": (np.uint8, "iu"),
    "UINT16": (np.uint16, "iu"),
    "UINT32": (np.uint32, "iu"),
    "UINT64": (np.uint64, "iu"),
    # FP16 in JSON goes beyond OVMS, which takes it only as binary data.
    "FP16": (np.float16, "fiu"),
    "FP32": (np.float32, "fiu"),
    "FP64": (np.float64, "fiu"),
}
_KIND_NAMES = {"b": "booleans", "iu": "integers", "fiu": "numbers"}

JsonValues = np.ndarray | PackedStrings


def json_values(datatype: str, data: list, name: str) -> JsonValues:
    """An input's JSON ``data`` (nested or flat lists) as a flat array of ``datatype``, or, for
    BYTES, its strings packed in the KServe BYTES layout."""
    if datatype == "BYTES":
        return _strings(data, name)
    found = _NUMERIC.get(datatype)
    if found is None:
        if datatype == "BF16":  # a KServe datatype, but JSON numbers cannot say which bf16
            raise _unparsable(name, "BF16 data must be sent as binary data")
        raise status_error(
            StatusCode.REST_UNSUPPORTED_PRECISION,
            f"datatype {quote(datatype)} cannot be given as JSON data; input name: {quote(name)}",
        )
    dtype, kinds = found
    try:
        array = np.asarray(data)
    except ValueError:  # ragged nesting: OVMS takes the values in order all the same
        array = _flat_array(data)
    except OverflowError:
        raise _unparsable(name, f"a value does not fit {datatype}") from None
    if kinds == "iu" and array.dtype.kind in "fO":
        # numpy turns a mix of negative and above-int64 integers into floats (or objects):
        # look at the values themselves.
        return _exact_integers(data, dtype, datatype, name)
    if array.dtype.kind not in kinds:
        raise _unparsable(name, f"{datatype} data must be {_KIND_NAMES[kinds]}")
    if kinds == "iu" and array.size:
        limits = np.iinfo(dtype)
        if int(array.min()) < limits.min or int(array.max()) > limits.max:
            raise _unparsable(name, f"a value does not fit {datatype}")
    return array.astype(dtype, copy=False).reshape(-1)


def _exact_integers(data: list, dtype: type, datatype: str, name: str) -> np.ndarray:
    values = list(_flat(data))
    if not all(type(value) is int for value in values):
        raise _unparsable(name, f"{datatype} data must be integers")
    limits = np.iinfo(dtype)
    if values and (min(values) < limits.min or max(values) > limits.max):
        raise _unparsable(name, f"a value does not fit {datatype}")
    return np.array(values, dtype=dtype)


def _strings(data: list, name: str) -> PackedStrings:
    strings = list(_flat(data))
    if not all(isinstance(item, str) for item in strings):
        raise _unparsable(name, "BYTES data must be strings")
    return PackedStrings(len(strings), bytes_codec.pack(strings))


def _flat_array(data: list) -> np.ndarray:
    try:
        return np.asarray(list(_flat(data)))
    except (ValueError, OverflowError):  # nothing numeric would come out of it
        return np.asarray([], dtype=object)


def _flat(data):
    for item in data:
        if isinstance(item, list):
            yield from _flat(item)
        else:
            yield item


def _unparsable(name: str, why: str) -> Exception:
    return status_error(StatusCode.REST_COULD_NOT_PARSE_INPUT, f"{why}; input name: {quote(name)}")


class RestInput:
    """One input of a REST request, with its data: a view of the binary tail, or JSON values."""

    __slots__ = ("_raw", "_values", "datatype", "name", "shape")

    def __init__(
        self,
        name: str,
        datatype: str,
        shape: tuple[int, ...],
        raw: memoryview | None,
        values: JsonValues | None,
    ) -> None:
        self.name = name
        self.datatype = datatype
        self.shape = shape
        self._raw = raw
        self._values = values

    @property
    def is_raw(self) -> bool:
        """Whether the data came as binary (the REST form of ``raw_input_contents``)."""
        return self._raw is not None

    def packed_bytes(self) -> tuple[memoryview | bytes, int | None]:
        """BYTES data in the KServe layout, and its element count when it came as JSON
        strings; None for binary data (OVMS's ``raw_input_contents``), not yet framed."""
        if self._raw is not None:
            return self._raw, None
        values = self._values
        if isinstance(values, PackedStrings):
            return values.data, values.count
        return b"", 0

    def to_tensor(self, model_datatype: str, element_count: int) -> _core.Tensor:
        if self._raw is not None:
            return self._raw_tensor(model_datatype, element_count)
        return self._json_tensor(element_count)

    def to_graph_tensor(self, python: bool) -> _core.Tensor:
        """The data as a graph input packet, by the rules of ``KServeInput.to_graph_tensor``:
        Python nodes take binary data of any datatype as it is; JSON data, and data for other
        nodes, must be of a KServe datatype."""
        itemsize = _core.datatype_itemsize(self.datatype) if python else element_size(self.datatype)
        known = self.datatype == "BYTES" or itemsize is not None
        if not known and not (python and self._raw is not None):
            raise status_error(
                StatusCode.INVALID_PRECISION,
                f"Provided datatype is invalid, custom datatypes are allowed only when the "
                f"data is binary; input name: {quote(self.name)}",
            )
        count = math.prod(self.shape)
        if self._raw is not None:
            return self._raw_tensor(self.datatype, count, itemsize)
        return self._json_tensor(count)

    def data(self) -> memoryview:
        """The data in the KServe binary layout (for a graph taking the whole request)."""
        if self._raw is not None:
            return self._raw
        values = self._values
        return memoryview(values.data if isinstance(values, PackedStrings) else values)

    def _raw_tensor(self, datatype: str, count: int, itemsize: int | None = None) -> _core.Tensor:
        # BYTES elements are counted when the C++ core unpacks them for the model.
        itemsize = itemsize or _core.datatype_itemsize(datatype)
        if itemsize is not None and len(self._raw) != count * itemsize:
            raise status_error(
                StatusCode.INVALID_CONTENT_SIZE,
                f"Expected: {count * itemsize} bytes; Actual: {len(self._raw)} bytes; "
                f"input name: {quote(self.name)}",
            )
        return _core.Tensor._from_raw(self.name, self._raw, list(self.shape), self.datatype)

    def _json_tensor(self, count: int) -> _core.Tensor:
        values = self._values
        if isinstance(values, PackedStrings):
            actual, data = values.count, values.data
        else:
            actual, data = values.size, values
        if actual != count:
            raise status_error(
                StatusCode.INVALID_VALUE_COUNT,
                f"Expected: {count} values; Actual: {actual} values; "
                f"input name: {quote(self.name)}",
            )
        return _core.Tensor._from_raw(self.name, data, list(self.shape), self.datatype)
