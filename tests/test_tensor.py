"""pyovms.Tensor built from Python buffers: datatypes, layout, zero copy, lifetime."""

from __future__ import annotations

import ctypes
import gc
import threading
import weakref

import numpy as np
import pytest

import ovmsx
from ovmsx.status import StatusCode
from pyovms import Tensor

# COMPAT.md §2.1, plus ovmsx's int64 rule: 8-byte `l`/`L` are INT64/UINT64.
DATATYPE_OF_DTYPE = [
    (np.bool_, "BOOL"),
    (np.uint8, "UINT8"),
    (np.uint16, "UINT16"),
    (np.uint32, "UINT32"),
    (np.dtype("Q"), "UINT64"),
    (np.uint64, "UINT64"),
    (np.int8, "INT8"),
    (np.int16, "INT16"),
    (np.int32, "INT32"),
    (np.dtype("q"), "INT64"),
    (np.int64, "INT64"),
    (np.float16, "FP16"),
    (np.float32, "FP32"),
    (np.float64, "FP64"),
]


def sample(dtype: np.dtype, shape: tuple[int, ...] = (2, 3, 4)) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)


def test_pyovms_and_ovmsx_export_one_type() -> None:
    assert ovmsx.Tensor is Tensor


@pytest.mark.parametrize(("dtype", "datatype"), DATATYPE_OF_DTYPE)
def test_datatype_and_layout_follow_numpy(dtype: np.dtype, datatype: str) -> None:
    array = sample(dtype)
    tensor = Tensor("t", array)
    expected = memoryview(array)
    assert tensor.datatype == datatype
    assert tensor.name == "t"
    assert tensor.shape == array.shape
    assert tensor.data.format == expected.format
    assert tensor.data.itemsize == array.itemsize
    assert tensor.data.shape == array.shape
    assert tensor.data.strides == array.strides
    assert tensor.size == tensor.nbytes == array.nbytes
    assert np.array_equal(np.array(tensor), array)
    assert bytes(tensor) == array.tobytes()


@pytest.mark.parametrize(("dtype", "datatype"), DATATYPE_OF_DTYPE)
def test_tensor_is_a_view_of_its_source(dtype: np.dtype, datatype: str) -> None:
    array = sample(dtype)
    tensor = Tensor("t", array)
    assert np.shares_memory(np.asarray(tensor), array)
    assert np.shares_memory(np.frombuffer(tensor, dtype=array.dtype), array)
    assert np.shares_memory(np.asarray(Tensor("again", tensor)), array)


def test_tensor_is_read_only() -> None:
    tensor = Tensor("t", sample(np.float32))
    assert tensor.data.readonly
    view = np.asarray(tensor)
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0, 0] = 1


def test_tensor_keeps_its_source_alive() -> None:
    array = sample(np.float32)
    expected = array.copy()
    source = weakref.ref(array)
    tensor = Tensor("t", array)
    del array
    gc.collect()
    assert source() is not None
    assert np.array_equal(np.array(tensor), expected)
    del tensor
    gc.collect()
    assert source() is None


def test_exported_source_cannot_move_under_the_tensor() -> None:
    source = bytearray(b"abcdef")
    tensor = Tensor("t", source)
    with pytest.raises(BufferError):
        source.extend(b"more")
    del tensor
    source.extend(b"more")  # released with the tensor
    assert source == b"abcdefmore"


def test_tensor_released_on_another_thread() -> None:
    array = sample(np.float32)
    source = weakref.ref(array)
    holder = [Tensor("t", array)]
    del array
    worker = threading.Thread(target=holder.clear)
    worker.start()
    worker.join()
    gc.collect()
    assert source() is None


@pytest.mark.parametrize(
    "make_strided",
    [
        lambda a: a[:, ::2],
        lambda a: a.T,
        lambda a: np.asfortranarray(a),
        lambda a: a[::-1],
    ],
    ids=["step", "transpose", "fortran", "reversed"],
)
def test_non_contiguous_source_is_copied_once_into_c_order(make_strided) -> None:
    strided = make_strided(np.arange(24, dtype=np.int32).reshape(4, 6))
    assert not strided.flags.c_contiguous
    tensor = Tensor("t", strided)
    assert tensor.shape == strided.shape
    assert np.array_equal(np.array(tensor), strided)
    assert bytes(tensor) == np.ascontiguousarray(strided).tobytes()
    assert tensor.data.strides == np.ascontiguousarray(strided).strides
    assert not np.shares_memory(np.asarray(tensor), strided)


def test_scalar_and_empty_arrays() -> None:
    scalar = Tensor("s", np.float32(3.5))
    assert scalar.shape == ()
    assert scalar.data.strides == ()
    assert scalar.size == 4
    assert np.array(scalar) == np.float32(3.5)
    empty = Tensor("e", np.zeros((0, 3), np.float32))
    assert empty.shape == (0, 3)
    assert empty.size == 0
    assert np.array(empty).shape == (0, 3)


def test_bytes_source_is_uint8() -> None:
    # The seed's first output example: Tensor("my_output1", "some text".encode()).
    tensor = Tensor("my_output1", b"some text")
    assert tensor.datatype == "UINT8"
    assert tensor.shape == (9,)
    assert bytes(tensor).decode() == "some text"


def test_unknown_format_becomes_the_datatype() -> None:
    # The seed's second output example; the datatype keeps numpy's format, as OVMS does.
    strings = np.array(["my", "batched", "string", "output"])
    tensor = Tensor("my_output2", strings)
    assert tensor.datatype == memoryview(strings).format == "7w"
    assert tensor.shape == (4,)
    assert np.array_equal(np.array(tensor), strings)
    relabelled = Tensor("my_output2", strings, datatype=strings.dtype.str)
    assert relabelled.datatype == "<U7"


def test_native_byte_order_prefix_is_understood() -> None:
    floats = (ctypes.c_float * 3)(1, 2, 3)
    assert memoryview(floats).format == "<f"
    assert Tensor("c", floats).datatype == "FP32"
    big_endian = np.arange(3, dtype=">f4")
    assert Tensor("b", big_endian).datatype == memoryview(big_endian).format == ">f"


def test_overrides_relabel_without_touching_data() -> None:
    array = np.arange(6, dtype=np.float32)
    tensor = Tensor("t", array, shape=[2, 3], datatype="my_type")
    assert tensor.shape == (2, 3)
    assert tensor.datatype == "my_type"
    assert tensor.data.format == "f"
    assert tensor.data.shape == (6,)
    assert np.shares_memory(np.asarray(tensor), array)
    assert Tensor("t", array, shape=(1, 1, 99)).shape == (1, 1, 99)


def test_seed_custom_datatype_from_request_bytes() -> None:
    # COMPAT.md §2.3 / seed "Custom types": datatype "my_string", shape (3,), 23 bytes.
    payload = b"null0terminated0string0"
    tensor = Tensor._from_raw("input", payload, [3], "my_string")
    assert tensor.datatype == "my_string"
    assert tensor.shape == (3,)
    assert tensor.data.format == "B"
    assert tensor.data.shape == (23,)
    assert tensor.data.strides == (1,)
    assert tensor.data.itemsize == 1
    assert tensor.size == 23
    assert bytes(tensor) == payload
    assert np.shares_memory(np.frombuffer(tensor, np.uint8), np.frombuffer(payload, np.uint8))


def test_request_bytes_of_a_known_datatype_get_its_layout() -> None:
    raw = np.arange(6, dtype=np.float32).tobytes()
    tensor = Tensor._from_raw("x", raw, [2, 3], "FP32")
    assert tensor.data.format == "f"
    assert tensor.data.shape == (2, 3)
    assert tensor.data.strides == (12, 4)
    assert np.array_equal(np.array(tensor), np.arange(6, dtype=np.float32).reshape(2, 3))
    bytes_tensor = Tensor._from_raw("s", b"\x01\x00\x00\x00a", [1], "BYTES")
    assert (bytes_tensor.data.format, bytes_tensor.data.shape) == ("B", (5,))


def test_request_bytes_of_wrong_size_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"Expected: 24 bytes; Actual: 20 bytes") as error:
        Tensor._from_raw("x", bytes(20), [2, 3], "FP32")
    assert error.value.code == StatusCode.INVALID_CONTENT_SIZE
    assert str(error.value).startswith("Invalid content size of tensor proto - ")


@pytest.mark.parametrize(
    ("shape", "match"),
    [([2, -1], "Negative dimension"), ([2**40, 2**40], "overflows")],
)
def test_bad_shapes_are_rejected(shape: list[int], match: str) -> None:
    with pytest.raises(ValueError, match=match) as error:
        Tensor._from_raw("x", b"", shape, "FP32")
    assert error.value.code == StatusCode.INVALID_SHAPE
    with pytest.raises(ValueError, match=match):
        Tensor("x", b"", shape=shape)


def test_constructor_spellings() -> None:
    array = np.ones(3, np.float32)
    assert Tensor(name="a", buffer=array).name == "a"
    assert Tensor("b", data=array).size == 12
    assert Tensor("c", array, (3,), "FP32").shape == (3,)
    with pytest.raises(TypeError, match="both"):
        Tensor("d", array, data=array)
    with pytest.raises(TypeError, match="missing its buffer"):
        Tensor("e")
    with pytest.raises(TypeError, match=r"buffer protocol.*got int"):
        Tensor("f", 42)


def test_repr_names_the_tensor() -> None:
    text = repr(Tensor("x", np.zeros((1, 10), np.float32)))
    assert text == "Tensor(name='x', shape=(1, 10), datatype='FP32', size=40)"
