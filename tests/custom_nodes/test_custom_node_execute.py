"""execute: inputs as views, outputs as zero-copy Tensors, and every way a library can return
something broken (COMPAT.md §1.3 steps 1-5)."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
from counted_nodes import assert_balanced

from ovmsx._core import CustomNodeLibrary, Tensor, bytes_pack
from ovmsx.status import StatusCode, StatusError


def numbers(values: list[float]) -> Tensor:
    return Tensor("input_numbers", np.array([values], np.float32))


def test_execute_adds(counted_node):
    instance = CustomNodeLibrary.load(str(counted_node("node_add").path)).initialize(
        {"add_value": "0.5"}
    )
    (output,) = instance.execute([numbers([1, 2, 3, 4])])
    assert (output.name, output.datatype, output.shape) == ("output_numbers", "FP32", (1, 4))
    np.testing.assert_array_equal(np.asarray(output), [[1.5, 2.5, 3.5, 4.5]])
    instance.close()


def test_outputs_are_zero_copy_and_released_when_the_last_view_dies(counted_node):
    node = counted_node("node_add")
    node.cdll.last_output_address.restype = ctypes.c_uint64
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"add_value": "1"})
    before = node.counts()
    (output,) = instance.execute([numbers([1, 2])])
    array = np.asarray(output)
    assert array.ctypes.data == node.cdll.last_output_address()
    after_execute = node.counts() - before
    # The array and the dims went back during execute; the data is still in use.
    assert (after_execute.allocated, after_execute.released) == (3, 2)
    del output
    gc.collect()
    assert (node.counts() - before).released == 2, "the numpy view still holds the data"
    np.testing.assert_array_equal(array, [[2, 3]])
    del array
    gc.collect()
    assert_balanced(node.counts() - before)
    instance.close()


def describe(node, inputs: list[Tensor]) -> tuple[np.ndarray, list[str]]:
    instance = CustomNodeLibrary.load(str(node.path)).initialize({})
    description, names = instance.execute(inputs)
    rows = np.asarray(description).copy()
    texts = [bytes(row).rstrip(b"\0").decode() for row in np.asarray(names)]
    del description, names
    instance.close()
    return rows, texts


DATATYPES = [
    # (numpy dtype or None for BYTES, KServe datatype, C enum value)
    (np.float32, "FP32", 1),
    (np.float16, "FP16", 2),
    (np.uint8, "UINT8", 3),
    (np.int8, "INT8", 4),
    (np.int16, "INT16", 5),
    (np.uint16, "UINT16", 6),
    (np.int32, "INT32", 7),
    (np.float64, "FP64", 8),
    (np.int64, "INT64", 9),
    (np.bool_, "BOOL", 0),
    (np.uint32, "UINT32", 0),
    (np.uint64, "UINT64", 0),
]


def test_inputs_are_views_with_their_precision(counted_node):
    arrays = [np.zeros((2, 3), dtype) for dtype, _, _ in DATATYPES]
    inputs = [
        Tensor(f"in_{datatype}", array, datatype=datatype)
        for array, (_, datatype, _) in zip(arrays, DATATYPES, strict=True)
    ]
    rows, names = describe(counted_node("node_describe"), inputs)
    assert names == [f"in_{datatype}" for _, datatype, _ in DATATYPES]
    for row, array, (_, datatype, precision) in zip(rows, arrays, DATATYPES, strict=True):
        assert row[0] == precision, datatype
        assert row[1] == array.nbytes, datatype
        assert list(row[2:3]) + list(row[4:6]) == [2, 2, 3], datatype
        assert row[3] == array.ctypes.data, f"{datatype} input was copied"


def _at_offset(dtype: type, offset: int) -> np.ndarray:
    """Four elements starting ``offset`` bytes into a buffer that numpy allocated aligned."""
    buffer = np.zeros(64, np.uint8)
    assert buffer.ctypes.data % 16 == 0
    return np.frombuffer(buffer.data, dtype, count=4, offset=offset)


def test_inputs_misaligned_for_their_element_type_are_handed_over_as_aligned_copies(counted_node):
    # A request's raw contents sit at any offset of the received message; a node reading them
    # as const float* needs them aligned to 4 (undefined behaviour otherwise).
    misaligned = _at_offset(np.float32, 1)
    misaligned[:] = [1, 2, 3, 4]
    four_aligned = _at_offset(np.float32, 4)  # aligned for FP32, though not to 16
    odd_bytes = _at_offset(np.uint8, 3)  # any address is aligned for UINT8
    inputs = [Tensor(f"in{i}", a) for i, a in enumerate((misaligned, four_aligned, odd_bytes))]
    rows, _ = describe(counted_node("node_describe"), inputs)
    copied, kept, kept_bytes = (int(row[3]) for row in rows)
    assert copied % 4 == 0
    assert copied != misaligned.ctypes.data
    assert kept == four_aligned.ctypes.data, "an FP32 input aligned to 4 was copied"
    assert kept_bytes == odd_bytes.ctypes.data, "a UINT8 input was copied"
    instance = CustomNodeLibrary.load(str(counted_node("node_add").path)).initialize(
        {"add_value": "1"}
    )
    (output,) = instance.execute([Tensor("input_numbers", misaligned.reshape(1, 4))])
    np.testing.assert_array_equal(np.asarray(output), [[2, 3, 4, 5]])  # the copy holds the data
    del output
    instance.close()


def test_bytes_and_scalar_inputs(counted_node):
    strings = Tensor._from_raw("text", bytes_pack([b"ab", b"c"]), [2], "BYTES")
    scalar = Tensor("scalar", np.array(7, np.int32))
    rows, names = describe(counted_node("node_describe"), [strings, scalar])
    assert names == ["text", "scalar"]
    assert list(rows[0][:3]) == [0, 4 + 2 + 4 + 1, 1]  # UNSPECIFIED, packed bytes, one dim
    assert rows[0][4] == 2
    assert list(rows[1][:3]) == [7, 4, 0]  # a scalar has no dims


def test_inputs_must_be_tensors(node_path):
    instance = CustomNodeLibrary.load(str(node_path("node_add"))).initialize({})
    with pytest.raises(TypeError):
        instance.execute([np.zeros((1, 2), np.float32)])
    instance.close()


CONTENT = "Custom node output has invalid content size"

FAILURES = [
    # (node, params, code, str(error) without the library path, pointers the node hands out)
    pytest.param(
        "node_execute_fails",
        {},
        StatusCode.NODE_LIBRARY_EXECUTION_FAILED,
        "Custom node failed during execution - execute returned 5; library: {path}",
        0,
        id="execute-returns-non-zero",
    ),
    pytest.param(
        "node_null_outputs",
        {},
        StatusCode.NODE_LIBRARY_OUTPUTS_CORRUPTED,
        "Custom node library has returned corrupted outputs handle - "
        "execute returned NULL outputs; library: {path}",
        0,
        id="null-outputs",
    ),
    pytest.param(
        "node_bad_output_count",
        {"count": "0"},
        StatusCode.NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT,
        "Custom node library has produced corrupted number of outputs - "
        "execute returned outputsCount 0; library: {path}",
        1,
        id="zero-outputs",
    ),
    pytest.param(
        "node_bad_output_count",
        {"count": "-3"},
        StatusCode.NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT,
        "Custom node library has produced corrupted number of outputs - "
        "execute returned outputsCount -3; library: {path}",
        1,
        id="negative-outputs",
    ),
    pytest.param(
        "node_unspecified_precision",
        {},
        StatusCode.NODE_LIBRARY_INVALID_PRECISION,
        "Custom node has produced tensor with unspecified precision - output: output_numbers",
        3,
        id="unspecified-precision",
    ),
    pytest.param(
        "node_unspecified_precision",
        {"precision": "42"},
        StatusCode.NODE_LIBRARY_INVALID_PRECISION,
        "Custom node has produced tensor with unspecified precision - output: output_numbers",
        3,
        id="precision-outside-the-enum",
    ),
    pytest.param(
        "node_null_data",
        {},
        StatusCode.NODE_LIBRARY_INVALID_CONTENT_SIZE,
        f"{CONTENT} - Expected: 40 bytes; Actual: no data (NULL); output: output_numbers",
        3,
        id="null-data",
    ),
    pytest.param(
        "node_wrong_data_bytes",
        {"delta": "-4"},
        StatusCode.NODE_LIBRARY_INVALID_CONTENT_SIZE,
        f"{CONTENT} - Expected: 40 bytes; Actual: 36 bytes; output: output_numbers",
        3,
        id="data-bytes-too-small",
    ),
    pytest.param(
        "node_wrong_data_bytes",
        {"delta": "4"},
        StatusCode.NODE_LIBRARY_INVALID_CONTENT_SIZE,
        f"{CONTENT} - Expected: 40 bytes; Actual: 44 bytes; output: output_numbers",
        3,
        id="data-bytes-too-large",
    ),
    pytest.param(
        "node_overflowing_dims",
        {"variant": "elements"},
        StatusCode.NODE_LIBRARY_INVALID_CONTENT_SIZE,
        f"{CONTENT} - Expected: dims (4294967296,4294967296) overflow 64 bits; "
        "Actual: 0 bytes; output: output_numbers",
        3,
        id="element-count-overflows",
    ),
    pytest.param(
        "node_overflowing_dims",
        {"variant": "bytes"},
        StatusCode.NODE_LIBRARY_INVALID_CONTENT_SIZE,
        f"{CONTENT} - Expected: dims (4611686018427387904,1) overflow 64 bits; "
        "Actual: 0 bytes; output: output_numbers",
        3,
        id="byte-count-overflows",
    ),
    pytest.param(
        "node_overflowing_dims",
        {"variant": "signed"},
        StatusCode.NODE_LIBRARY_INVALID_CONTENT_SIZE,
        f"{CONTENT} - Expected: dims (9223372036854775808,0) overflow 64 bits; "
        "Actual: 0 bytes; output: output_numbers",
        3,
        id="dim-beyond-int64",
    ),
    pytest.param(
        "node_null_name",
        {},
        StatusCode.NODE_LIBRARY_OUTPUT_MISSING_NAME,
        "Custom node output is missing name - output: #0 (no name)",
        3,
        id="null-name",
    ),
    pytest.param(
        "node_many_errors",
        {},
        StatusCode.NODE_LIBRARY_OUTPUT_MISSING_NAME,
        "Custom node output is missing name - output: #1 (no name)",
        11,
        id="first-of-many-errors",
    ),
]


@pytest.mark.parametrize(("name", "params", "code", "message", "handed_out"), FAILURES)
def test_execute_failure(counted_node, name, params, code, message, handed_out):
    node = counted_node(name)
    instance = CustomNodeLibrary.load(str(node.path)).initialize(params)
    before = node.counts()
    with pytest.raises(StatusError) as caught:
        instance.execute([numbers([1, 2])])
    assert caught.value.code == code
    assert str(caught.value) == message.format(path=node.path)
    delta = node.counts() - before
    # node_null_data and node_many_errors give one data buffer back themselves.
    assert delta.allocated == handed_out
    assert_balanced(delta)
    instance.close()
    assert (node.counts() - before).deinitialized == 1


def test_failures_do_not_leak_when_repeated(counted_node):
    node = counted_node("node_many_errors")
    instance = CustomNodeLibrary.load(str(node.path)).initialize({})
    before = node.counts()
    for _ in range(1000):
        with pytest.raises(StatusError):
            instance.execute([])
    delta = node.counts() - before
    assert delta.allocated == 11_000
    assert_balanced(delta)
    instance.close()
