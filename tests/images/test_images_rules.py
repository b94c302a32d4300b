"""The image rules one by one, in process: which inputs take images, layout agreement, target
sizes, and the cases OVMS's own conversion tests pin down (tensor_conversion_test.cpp)."""

from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovmsx.images import image_endpoint, takes_strings
from ovmsx.images.convert import image_tensor
from ovmsx.images.endpoint import layouts_intersect
from ovmsx.pipeline.ports import PortSpec
from ovmsx.status import StatusCode, StatusError

ANY = (0, -1)
NHWC = "[N,H,W,C]"


def _port(dims, datatype="UINT8", layout=NHWC) -> PortSpec:
    return PortSpec("image", datatype, tuple(d if isinstance(d, tuple) else (d, d) for d in dims),
                    False, layout)  # fmt: skip


class _Given:
    """A BYTES input as the frontends hand it over: raw data, or one element per image."""

    def __init__(self, images: list[bytes], raw: bool = True, shape=None) -> None:
        self.name = "image"
        self.shape = (len(images),) if shape is None else tuple(shape)
        self._packed = b"".join(struct.pack("<I", len(i)) + i for i in images)
        self._count = None if raw else len(images)

    def packed_bytes(self):
        return memoryview(self._packed), self._count


def _jpeg(height: int, width: int, channels: int = 3, value: int = 200) -> bytes:
    image = np.full((height, width, channels), value, np.uint8)
    return cv2.imencode(".jpg", image if channels > 1 else image[:, :, 0])[1].tobytes()


def _convert(port: PortSpec, images: list[bytes], **kw) -> np.ndarray:
    endpoint = image_endpoint(port)
    assert endpoint is not None
    return np.asarray(image_tensor(endpoint, _Given(images, **kw)))


def _refusal(port: PortSpec, images: list[bytes], **kw) -> StatusCode:
    with pytest.raises(StatusError) as refused:
        _convert(port, images, **kw)
    return refused.value.code


@pytest.mark.parametrize(
    ("port", "image", "strings"),
    [
        (_port([1, 4, 4, 3], "FP32"), True, False),
        (_port([1, 4, 4, 3], "BYTES"), False, True),  # a STRING input: native strings
        (_port([3, 8]), False, True),  # OVMS's 2-D UINT8 string form
        (_port([ANY]), False, True),  # its 1-D form
        (_port([5]), False, False),  # 1-D of fixed size: neither
        (_port([1, 2, 3], "FP32"), False, False),
        (_port([1, 1, 4, 4, 3]), False, False),  # 5-D, not behind a demultiplexer
        (_port([1, 4, 4, 3]).with_first_dim(), True, False),  # 5-D behind one
        (_port([3, 8]).with_first_dim(), False, False),  # no string form behind one
        (PortSpec("image", "UINT8", (), True), False, False),  # any rank
    ],
)
def test_which_inputs_take_images(port: PortSpec, image: bool, strings: bool) -> None:
    assert (image_endpoint(port) is not None) == image
    assert takes_strings(port) == strings


@pytest.mark.parametrize(
    ("layout", "rank", "agrees"),
    [
        ("NHWC", 4, True),
        ("N...", 4, True),  # OVMS's default
        ("...", 4, True),
        ("N?HWC", 5, True),
        ("N?...", 5, True),
        ("NCHW", 4, False),
        ("NC", 4, False),
        ("NHW?", 4, True),
        ("?HWC", 4, True),
        ("CHWN", 4, False),
        ("NHWCD...", 4, False),  # more letters than dimensions
    ],
)
def test_layouts_that_agree_with_nhwc(layout: str, rank: int, agrees: bool) -> None:
    assert layouts_intersect(layout, "N...HWC", rank) == agrees


def test_intersection_as_ovms_tests_it() -> None:
    assert layouts_intersect("N...H?", "NCH...", 4)
    assert not layouts_intersect("NCHW", "NHWC", 4)


def test_the_demultiplexer_moves_the_batch_letter() -> None:
    assert _port([1, 4, 4, 3]).with_first_dim(5).layout == "[N,?,H,W,C]"
    assert _port([1, 4, 4, 3], layout="").with_first_dim().layout == "[N,?,...]"
    endpoint = image_endpoint(_port([1, 4, 4, 3]).with_first_dim(5))
    assert endpoint is not None
    assert endpoint.layout == "N?HWC"
    assert endpoint.resizable


# The cases of OVMS's tensor_conversion_test.cpp (COMPAT.md §13), with a 1x1 or 4x4 JPEG.
def test_any_dimension_turns_resizing_off() -> None:
    assert _refusal(_port([1, ANY, 4, 3]), [_jpeg(1, 1)]) is StatusCode.INVALID_SHAPE
    assert _convert(_port([1, ANY, 1, 3]), [_jpeg(1, 1)]).shape == (1, 1, 1, 3)


def test_the_default_layout_resizes_nothing() -> None:
    port = _port([1, 3, 1, 3], layout="")
    assert _refusal(port, [_jpeg(1, 1)]) is StatusCode.INVALID_SHAPE


def test_nhwc_resizes_to_the_fixed_size() -> None:
    assert _convert(_port([1, 2, 2, 3]), [_jpeg(1, 1)]).shape == (1, 2, 2, 3)


def test_a_range_clamps_to_its_nearer_bound() -> None:
    assert _convert(_port([1, 1, (2, 5), 3]), [_jpeg(1, 1)]).shape == (1, 1, 2, 3)
    assert _convert(_port([1, 1, (1, 3), 3]), [_jpeg(4, 4)]).shape == (1, 1, 3, 3)


@pytest.mark.parametrize("batch", [ANY, 5])
def test_an_image_inside_the_range_keeps_its_size(batch) -> None:
    port = _port([batch, (1, 5), (1, 5), 3])
    assert _convert(port, [_jpeg(4, 4)] * 5).shape == (5, 4, 4, 3)


def test_behind_a_demultiplexer_the_tensor_is_five_dimensional() -> None:
    port = _port([1, (1, 3), (1, 3), 3]).with_first_dim(5)
    assert _convert(port, [_jpeg(4, 4)] * 5).shape == (5, 1, 3, 3, 3)


def test_a_zero_length_raw_element_fails_to_parse() -> None:
    assert _refusal(_port([1, 4, 4, 3]), [b""]) is StatusCode.IMAGE_PARSING_FAILED


def test_an_empty_raw_buffer_is_a_batch_error() -> None:
    assert _refusal(_port([ANY, 4, 4, 3]), []) is StatusCode.INVALID_BATCH_SIZE


def test_an_empty_element_given_one_by_one() -> None:
    port = _port([1, 4, 4, 3])
    assert _refusal(port, [b""], raw=False) is StatusCode.BYTES_CONTENTS_EMPTY


@pytest.mark.parametrize("datatype", ["INT64", "UINT32", "UINT64", "BOOL"])
def test_precisions_images_cannot_take(datatype: str) -> None:
    assert _refusal(_port([1, 4, 4, 3], datatype), [_jpeg(4, 4)]) is StatusCode.INVALID_PRECISION


def test_a_layout_that_disagrees() -> None:
    port = _port([1, 4, 4, 3], layout="[N,C]")
    assert _refusal(port, [_jpeg(4, 4)]) is StatusCode.UNSUPPORTED_LAYOUT


def test_no_batch_in_the_layout() -> None:
    port = _port([4, 4, 4, 3], layout="[?,H,W,C]")
    assert _refusal(port, [_jpeg(4, 4)] * 4) is StatusCode.INVALID_BATCH_SIZE


@pytest.mark.parametrize("datatype", ["FP16", "INT8", "INT32", "FP64", "INT16", "UINT16"])
def test_every_supported_precision_resizes(datatype: str) -> None:
    answer = _convert(_port([1, 2, 2, 3], datatype), [_jpeg(4, 4, value=100)])
    assert answer.shape == (1, 2, 2, 3)
    np.testing.assert_allclose(answer.astype(np.float64), 100, atol=2)


def test_a_narrower_precision_saturates() -> None:
    answer = _convert(_port([1, 4, 4, 3], "INT8"), [_jpeg(4, 4)])
    np.testing.assert_array_equal(answer, 127)


def _outcome(data: bytes) -> StatusCode | None:
    """None when ``data`` decodes, else the status it is refused with."""
    try:
        _convert(_port([1, 4, 4, 3]), [data])
    except StatusError as refused:
        return refused.code
    return None


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_decode_or_fail_to_parse(data: bytes) -> None:
    assert _outcome(data) in (None, StatusCode.IMAGE_PARSING_FAILED)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 3), st.integers(1, 40))
def test_damaged_files_fail_to_parse(cut: int, keep: int) -> None:
    data = bytearray(_jpeg(8, 8))
    data = data[: max(keep, 1)] if cut == 0 else data
    if cut:
        data[cut * 7 : cut * 7 + 4] = b"\xff\xff\xff\xff"
    assert _outcome(bytes(data)) in (None, StatusCode.IMAGE_PARSING_FAILED)


def test_tiff_is_refused_as_ovms_builds_opencv_without_it() -> None:
    tiff = cv2.imencode(".tiff", np.full((4, 4, 3), 9, np.uint8))[1].tobytes()
    assert cv2.imdecode(np.frombuffer(tiff, np.uint8), cv2.IMREAD_UNCHANGED) is not None
    assert _refusal(_port([1, 4, 4, 3]), [tiff]) is StatusCode.IMAGE_PARSING_FAILED
