"""BYTES codec against slow, obviously correct Python references (hypothesis)."""

from __future__ import annotations

import struct
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovmsx import bytes_codec
from ovmsx.status import StatusCode
from pyovms import Tensor


def reference_pack(items: list[bytes]) -> bytes:
    return b"".join(struct.pack("<I", len(item)) + item for item in items)


def reference_unpack(buffer: bytes) -> list[bytes]:
    items, offset = [], 0
    while offset < len(buffer):
        if len(buffer) - offset < 4:
            raise ValueError("truncated prefix")
        (length,) = struct.unpack_from("<I", buffer, offset)
        offset += 4
        if length > len(buffer) - offset:
            raise ValueError("length past the end")
        items.append(buffer[offset : offset + length])
        offset += length
    return items


def reference_padded(items: list[bytes]) -> np.ndarray:
    width = max((len(item) for item in items), default=0) + 1
    rows = np.zeros((len(items), width), np.uint8)
    for row, item in zip(rows, items, strict=True):
        row[: len(item)] = np.frombuffer(item, np.uint8)
    return rows


elements = st.lists(st.binary(max_size=64), max_size=40)


@given(elements)
def test_pack_matches_reference(items: list[bytes]) -> None:
    assert bytes_codec.pack(items) == reference_pack(items)


@given(elements)
def test_unpack_round_trips(items: list[bytes]) -> None:
    packed = bytes_codec.pack(items)
    assert bytes_codec.unpack(packed) == items
    assert bytes_codec.unpack(packed, count=len(items)) == items
    assert [bytes(view) for view in bytes_codec.unpack_views(packed)] == items


@given(st.binary(max_size=96))
def test_any_buffer_decodes_like_the_reference_or_raises_value_error(buffer: bytes) -> None:
    try:
        expected = reference_unpack(buffer)
    except ValueError:
        with pytest.raises(ValueError, match="BYTES element"):
            bytes_codec.unpack(buffer)
        with pytest.raises(ValueError, match="BYTES element"):
            bytes_codec.unpack_views(buffer)
    else:
        assert bytes_codec.unpack(buffer) == expected
        assert [bytes(view) for view in bytes_codec.unpack_views(buffer)] == expected


@given(elements, st.integers(min_value=0, max_value=50))
def test_element_count_is_checked(items: list[bytes], count: int) -> None:
    packed = bytes_codec.pack(items)
    if count == len(items):
        assert bytes_codec.unpack(packed, count) == items
    else:
        message = f"holds {len(items)} elements; the shape needs {count}"
        with pytest.raises(ValueError, match=message):
            bytes_codec.unpack(packed, count)


@given(st.lists(st.text(max_size=20), max_size=20))
def test_str_elements_are_utf8(items: list[str]) -> None:
    encoded = [item.encode() for item in items]
    assert bytes_codec.pack(items) == reference_pack(encoded)


@given(st.lists(st.binary(max_size=30).filter(lambda b: b"\0" not in b), max_size=30))
def test_padded_form_matches_reference_and_round_trips(items: list[bytes]) -> None:
    tensor = bytes_codec.to_padded(items, name="text")
    expected = reference_padded(items)
    assert tensor.name == "text"
    assert tensor.datatype == "UINT8"
    assert tensor.shape == expected.shape
    assert np.array_equal(np.array(tensor), expected)
    assert bytes_codec.from_padded(tensor) == items
    assert bytes_codec.from_padded(expected) == items


def test_error_names_element_and_offset() -> None:
    packed = reference_pack([b"ab", b"cde"])
    with pytest.raises(ValueError, match="element 1 at byte offset 6: declares 3 bytes but only 1"):
        bytes_codec.unpack(packed[:-2])
    with pytest.raises(ValueError, match="element 2 at byte offset 13: length prefix truncated"):
        bytes_codec.unpack(packed + b"\x01")
    with pytest.raises(ValueError, match="declares 4294967295 bytes but only 0 follow") as error:
        bytes_codec.unpack(b"\xff\xff\xff\xff")
    assert error.value.code is StatusCode.INVALID_INPUT_FORMAT


def test_numpy_arrays_of_strings() -> None:
    items = [b"a", b"bc", b"", b"def"]
    expected = reference_pack(items)
    assert bytes_codec.pack(np.array(items, dtype=object)) == expected
    assert bytes_codec.pack(np.array(items, dtype=object).reshape(2, 2)) == expected
    assert bytes_codec.pack(np.array(items, dtype="S3")) == expected
    assert bytes_codec.pack(np.array(["a", "bc", "", "def"])) == expected
    with pytest.raises(TypeError, match="dtype float32"):
        bytes_codec.pack(np.zeros(3, np.float32))


def test_buffers_are_elements_too() -> None:
    items = [bytearray(b"ab"), memoryview(b"cd"), np.frombuffer(b"ef", np.uint8)]
    assert bytes_codec.pack(items) == reference_pack([b"ab", b"cd", b"ef"])


def test_bad_element_is_named() -> None:
    message = "element 1 must be bytes, str or a buffer, got int"
    with pytest.raises(TypeError, match=message):
        bytes_codec.pack([b"ok", 7])


def test_views_share_memory_and_keep_the_buffer_alive() -> None:
    packed = np.frombuffer(reference_pack([b"hello", b"world"]), np.uint8).copy()
    source = weakref.ref(packed)
    views = bytes_codec.unpack_views(packed)
    assert np.shares_memory(np.frombuffer(views[1], np.uint8), packed)
    del packed
    assert source() is not None
    assert [bytes(view) for view in views] == [b"hello", b"world"]
    del views
    assert source() is None


def test_tensor_of_bytes_unpacks() -> None:
    packed = reference_pack([b"x", b"yz"])
    tensor = Tensor._from_raw("in", packed, [2], "BYTES")
    assert bytes_codec.unpack(tensor, count=2) == [b"x", b"yz"]


def test_padded_rows_without_zero_use_the_whole_row() -> None:
    rows = np.array([[97, 98], [99, 0]], np.uint8)
    assert bytes_codec.from_padded(rows) == [b"ab", b"c"]
    assert bytes_codec.from_padded(np.zeros((0, 5), np.uint8)) == []
    with pytest.raises(ValueError, match="2-D buffer of 1-byte items"):
        bytes_codec.from_padded(np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="2-D buffer of 1-byte items"):
        bytes_codec.from_padded(np.zeros((2, 2), np.float32))


def test_empty_inputs() -> None:
    assert bytes_codec.pack([]) == b""
    assert bytes_codec.unpack(b"") == []
    assert bytes_codec.unpack(b"", count=0) == []
    empty = bytes_codec.to_padded([])
    assert empty.shape == (0, 1)


@pytest.mark.parametrize("lone", [b"hey", "hey", bytearray(b"hey")])
def test_a_lone_element_is_refused(lone) -> None:
    with pytest.raises(TypeError, match=r"got a single \w+; wrap it in a list"):
        bytes_codec.pack(lone)


def test_strided_buffers_decode_like_contiguous_ones() -> None:
    packed = np.frombuffer(reference_pack([b"ab", b"c"]), np.uint8)
    strided = np.repeat(packed, 2)[::2]  # same bytes, every other byte of a larger array
    assert not strided.flags.c_contiguous
    assert bytes_codec.unpack(strided) == [b"ab", b"c"]
    assert [bytes(view) for view in bytes_codec.unpack_views(strided)] == [b"ab", b"c"]
    assert bytes_codec.pack([memoryview(b"xaybz")[::2]]) == reference_pack([b"xyz"])
    rows = np.array([[97, 0, 98, 0], [99, 0, 0, 0]], np.uint8)[:, ::2]
    assert bytes_codec.from_padded(rows) == [b"ab", b"c"]


def test_views_of_a_typed_tensor_are_flat_bytes() -> None:
    packed = reference_pack([b"abc", b"d"])  # 12 bytes: three FP32 items to the buffer protocol
    tensor = Tensor("t", np.frombuffer(packed, np.float32))
    assert [bytes(view) for view in bytes_codec.unpack_views(tensor)] == [b"abc", b"d"]


def test_large_packs_match_the_reference() -> None:
    # Over 1 MiB, pack() copies with the GIL released, holding every element itself.
    items = [b"a" * 700_000, "é" * 300_000, memoryview(b"xyz" * 100_000), b""]
    expected = reference_pack([b"a" * 700_000, "é".encode() * 300_000, b"xyz" * 100_000, b""])
    assert len(expected) > 1 << 20
    assert bytes_codec.pack(items) == expected


def test_an_impossible_count_is_reported_not_allocated() -> None:
    packed = reference_pack([b"a", b"b"])
    with pytest.raises(ValueError, match="holds 2 elements; the shape needs 1099511627776"):
        bytes_codec.unpack(packed, count=2**40)
