"""Graph-level stream tags: what packet a request input becomes and how a packet is answered.

The tag of a graph ``input_stream``/``output_stream`` picks the packet kind by prefix, as OVMS
does (COMPAT §4.1): ``OVMS_PY_TENSOR`` → a Python node's Tensor, ``OVTENSOR`` or no tag → an
OpenVINO tensor, ``TENSOR`` → a tensor in MediaPipe's datatypes, ``IMAGE`` → an ImageFrame,
``REQUEST``/``RESPONSE`` → the whole KServe request/response. ``TFTENSOR`` and
``TFLITE_TENSOR`` are refused at load. In ovmsx every tensor kind is the one ``Tensor``.
"""

from __future__ import annotations

import enum

from ovmsx import _core
from ovmsx.graph.calculators.openvino_inference import MEDIAPIPE_TENSOR_DATATYPES
from ovmsx.graph.contract import TENSORFLOW_PREFIXES
from ovmsx.graph.graph_config import StreamRef
from ovmsx.graph.image_frame import INPUT_FORMATS, ImageFrame
from ovmsx.quoting import quote, quote_shape
from ovmsx.status import StatusCode, status_error


class StreamKind(enum.Enum):
    PYTHON = "OVMS_PY_TENSOR"
    OV_TENSOR = "OVTENSOR"
    MP_TENSOR = "TENSOR"
    IMAGE = "IMAGE"
    REQUEST = "REQUEST"
    RESPONSE = "RESPONSE"


# Checked in this order: OVTENSOR before TENSOR would not matter, but OVMS_PY_TENSOR must come
# before nothing else sharing its start; the order mirrors OVMS's prefix checks.
_PREFIXES = (
    StreamKind.REQUEST,
    StreamKind.RESPONSE,
    StreamKind.OV_TENSOR,
    StreamKind.PYTHON,
    StreamKind.IMAGE,
    StreamKind.MP_TENSOR,
)


def stream_kind(ref: StreamRef) -> StreamKind:
    """The packet kind of a graph stream; an unknown or absent tag means an OpenVINO tensor."""
    for prefix in TENSORFLOW_PREFIXES:
        if ref.tag.startswith(prefix):
            raise status_error(
                StatusCode.NOT_IMPLEMENTED,
                f"graph stream {ref}: tag {ref.tag} carries TensorFlow tensors, which ovmsx "
                "does not serve; use OVTENSOR, TENSOR or OVMS_PY_TENSOR tags",
            )
    for kind in _PREFIXES:
        if ref.tag.startswith(kind.value):
            return kind
    return StreamKind.OV_TENSOR


def image_packet(tensor: _core.Tensor, raw: bool, name: str) -> ImageFrame:
    """An IMAGE input: raw HWC pixels, each dimension > 0, a datatype/channel pair MediaPipe
    has a format for (COMPAT §4.2)."""
    if not raw:
        raise status_error(
            StatusCode.MEDIAPIPE_EXECUTION_ERROR,
            f"IMAGE input {name} must be sent in raw_input_contents",
        )
    shape = tensor.shape
    if len(shape) != 3:
        raise status_error(
            StatusCode.INVALID_SHAPE,
            f"Invalid Mediapipe Image input shape size. Expected: 3; Actual: {len(shape)}; "
            f"input name: {name}",
        )
    for dim, what in zip(shape, ("height", "width", "number of channels"), strict=True):
        if dim <= 0:
            raise status_error(
                StatusCode.INVALID_SHAPE,
                f"Invalid Mediapipe Image input {what}. Expected greater than 0; Actual: {dim}; "
                f"input name: {name}",
            )
    image_format = INPUT_FORMATS.get((tensor.datatype, shape[2]))
    if image_format is None:
        raise status_error(
            StatusCode.INVALID_INPUT_FORMAT,
            f"no MediaPipe image format holds {quote(tensor.datatype)} with {shape[2]} channels; "
            f"input name: {name}",
        )
    return ImageFrame(image_format, tensor)


def mediapipe_tensor_packet(tensor: _core.Tensor, raw: bool, name: str) -> _core.Tensor:
    """A TENSOR input: MediaPipe's datatypes only (FP16 raw only), every dimension > 0."""
    if tensor.datatype not in MEDIAPIPE_TENSOR_DATATYPES or (tensor.datatype == "FP16" and not raw):
        raise status_error(
            StatusCode.INVALID_PRECISION,
            f"TENSOR inputs take FP32, FP16 (raw), INT32, INT8, UINT8 or BOOL; Actual: "
            f"{quote(tensor.datatype)}; input name: {name}",
        )
    if any(dim <= 0 for dim in tensor.shape):
        raise status_error(
            StatusCode.INVALID_SHAPE,
            f"TENSOR inputs need every dimension > 0; Actual: {quote_shape(tensor.shape)}; "
            f"input name: {name}",
        )
    return tensor


def response_tensor(kind: StreamKind, stream: str, value: object) -> tuple[str, _core.Tensor]:
    """(output name, Tensor) for a packet on a tensor-like graph output."""
    if kind is StreamKind.IMAGE:
        if not isinstance(value, ImageFrame):
            raise _wrong_packet(stream, value, "an ImageFrame")
        return stream, value.to_tensor(stream)
    if not isinstance(value, _core.Tensor):
        raise _wrong_packet(stream, value, "a Tensor")
    # OVMS_PY_TENSOR outputs are named by the Tensor, the others by their stream.
    return (value.name if kind is StreamKind.PYTHON else stream), value


def _wrong_packet(stream: str, value: object, expected: str):
    return status_error(
        StatusCode.MEDIAPIPE_EXECUTION_ERROR,
        f"output stream {stream} carries {type(value).__name__}, not {expected}",
    )
