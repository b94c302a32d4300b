"""Checks a request against a model's inputs, in OVMS's order and with its messages.

Order (OVMS request validator): the number of inputs; then, for each model input by name:
present, no negative dims, datatype, rank, batch dim, other dims, content size. The first
failure is the answer. Nothing large is allocated before the data has passed every check.
BYTES data for an input that takes no strings are encoded images, with checks of their own
(ovmsx/images).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ovmsx import _core
from ovmsx.images import image_endpoint, takes_strings
from ovmsx.quoting import quote, quote_shape
from ovmsx.servables.infer_request import RequestInput
from ovmsx.servables.port_layout import batch_index
from ovmsx.status import StatusCode, status_error

# OVMS writes the expected side of a precision error with its own precision names.
_OVMS_PRECISION = {
    "FP64": "FP64", "FP32": "FP32", "FP16": "FP16", "BF16": "BF16",
    "INT64": "I64", "INT32": "I32", "INT16": "I16", "INT8": "I8",
    "UINT64": "U64", "UINT32": "U32", "UINT16": "U16", "UINT8": "U8",
    "BOOL": "BOOL", "BYTES": "STRING",
}  # fmt: skip

_MAX_COUNT = 2**63 - 1


def _dim_text(bounds: tuple[int, int]) -> str:
    low, high = bounds
    if low == high:
        return str(low)
    if high == -1:
        return "-1"
    return f"[{low}~{high}]"


def model_shape_text(port: _core.PortInfo) -> str:
    if port.rank_dynamic:
        return "..."
    return "(" + ",".join(_dim_text(d) for d in port.dims) + ")"


def _matches(bounds: tuple[int, int], value: int) -> bool:
    low, high = bounds
    return low <= value and (high == -1 or value <= high)


def element_count(shape: Sequence[int], name: str) -> int:
    count = 1
    for dim in shape:
        count *= dim
        if count > _MAX_COUNT:
            raise status_error(
                StatusCode.INVALID_CONTENT_SIZE, f"Shape dimensions overflow; input name: {name}"
            )
    return count


class _InputRule:
    """What one model input accepts, worked out once per loaded version."""

    __slots__ = ("batch", "dims", "image", "port", "strings_2d")

    def __init__(self, port: _core.PortInfo) -> None:
        self.port = port
        self.dims: list[tuple[int, int]] | None = None if port.rank_dynamic else list(port.dims)
        self.batch = batch_index(port)
        self.image = image_endpoint(port)  # BYTES data for it are encoded images
        # OVMS's 2-D UINT8 string form: N strings as [N, longest + 1] bytes, zero-padded.
        self.strings_2d = (
            port.datatype == "UINT8"
            and self.dims is not None
            and len(self.dims) == 2
            and not getattr(port, "demultiplexed", False)
        )

    def tensor(self, given: RequestInput) -> _core.Tensor | Callable[[], _core.Tensor]:
        """The input's Tensor; for encoded images, the conversion still to run."""
        port, name, shape = self.port, self.port.name, given.shape
        if any(d < 0 for d in shape):
            raise status_error(
                StatusCode.INVALID_SHAPE,
                "Negative or zero dimension size is not acceptable: "
                f"{quote_shape(shape)}; input name: {name}",
            )
        if given.datatype == "BYTES" and not takes_strings(port):
            return self._bytes_tensor(given)
        if given.datatype == "BYTES" and self.strings_2d:
            padded = _padded_strings(given, name)
            self._check_dims(tuple(padded.shape))
            return padded
        if given.datatype != port.datatype:
            expected = _OVMS_PRECISION.get(port.datatype, port.datatype)
            raise status_error(
                StatusCode.INVALID_PRECISION,
                f"Expected: {expected}; Actual: {quote(given.datatype)}; input name: {name}",
            )
        self._check_dims(shape)
        return given.to_tensor(port.datatype, element_count(shape, name))

    def _check_dims(self, shape: Sequence[int]) -> None:
        dims, name = self.dims, self.port.name
        if dims is None:
            return
        if len(shape) != len(dims):
            raise self._shape_error(StatusCode.INVALID_NO_OF_SHAPE_DIMENSIONS, shape)
        batch = self.batch
        if batch is not None and not _matches(dims[batch], shape[batch]):
            raise status_error(
                StatusCode.INVALID_BATCH_SIZE,
                f"Expected: {_dim_text(dims[batch])}; Actual: {shape[batch]}; input name: {name}",
            )
        if not all(_matches(b, v) for b, v in zip(dims, shape, strict=True)):
            raise self._shape_error(StatusCode.INVALID_SHAPE, shape)

    def _bytes_tensor(self, given: RequestInput) -> Callable[[], _core.Tensor]:
        """BYTES data for an input of another datatype: encoded images, if it takes them. As
        in OVMS, only the request validator's checks run now; converting (and refusing what
        cannot be converted) waits until every input has passed them."""
        if self.image is None or not hasattr(given, "packed_bytes"):
            error = status_error(
                StatusCode.NOT_IMPLEMENTED,
                f"BYTES data for input {self.port.name} of datatype {self.port.datatype} and "
                f"shape {model_shape_text(self.port)}: only 4-D image inputs take encoded "
                "images",
            )

            def refuse() -> _core.Tensor:
                raise error

            return refuse
        # Imported here, so that OpenCV loads with the first images (ovmsx/images/__init__.py).
        from ovmsx.images.convert import image_conversion

        return image_conversion(self.image, given)  # type: ignore[arg-type]  # packed_bytes

    def _shape_error(self, code: StatusCode, shape: Sequence[int]) -> Exception:
        return status_error(
            code,
            f"Expected: {model_shape_text(self.port)}; Actual: {quote_shape(shape)}; "
            f"input name: {self.port.name}",
        )


def _padded_strings(given: RequestInput, name: str) -> _core.Tensor:
    """BYTES strings [N] as OVMS hands them to a 2-D UINT8 input: one row per string, each as
    long as the longest plus a terminating zero."""
    if len(given.shape) != 1:
        raise status_error(
            StatusCode.INVALID_NO_OF_SHAPE_DIMENSIONS,
            f"Expected number of input shape dimensions: 1; Actual: {len(given.shape)}; "
            f"input name: {name}",
        )
    strings = _core.bytes_unpack(given.to_graph_tensor(python=False))
    return _core.bytes_to_padded(strings, name)


class InputValidator:
    """Checks requests against one loaded version's inputs."""

    def __init__(self, ports: Sequence[_core.PortInfo]) -> None:
        self._names = [port.name for port in ports]
        # OVMS checks inputs in name order, so the first error reported is the same.
        self._rules = sorted((_InputRule(port) for port in ports), key=lambda r: r.port.name)
        self._takes_images = any(rule.image is not None for rule in self._rules)

    def decodes(self, given: Sequence[RequestInput]) -> bool:
        """Whether checking ``given`` means decoding images: milliseconds per image, work for
        a thread of its own rather than the thread polling gRPC or the event loop."""
        return self._takes_images and any(item.datatype == "BYTES" for item in given)

    def tensors(self, given: Sequence[RequestInput]) -> list[_core.Tensor]:
        """The request's data as Tensors in the model's input order, or the first OVMS error."""
        expected = len(self._rules)
        if len(given) != expected or not given:
            raise status_error(
                StatusCode.INVALID_NO_OF_INPUTS, f"Expected: {expected}; Actual: {len(given)}"
            )
        by_name: dict[str, RequestInput] = {}
        for item in given:
            by_name.setdefault(item.name, item)  # the first input of a name wins, as in OVMS
        tensors: dict[str, _core.Tensor | Callable[[], _core.Tensor]] = {}
        for rule in self._rules:
            item = by_name.get(rule.port.name)
            if item is None:
                raise status_error(
                    StatusCode.INVALID_MISSING_INPUT, f"Required input: {rule.port.name}"
                )
            tensors[rule.port.name] = rule.tensor(item)
        for name, tensor in tensors.items():  # conversions, once the whole request is valid
            if callable(tensor):
                tensors[name] = tensor()
        return [tensors[name] for name in self._names]  # type: ignore[misc]  # all converted
