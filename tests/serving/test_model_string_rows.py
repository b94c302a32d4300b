"""OVMS's 2-D UINT8 string form: BYTES strings [N] sent to a model's 2-D UINT8 input reach it
as [N, longest + 1] bytes, one zero-padded row per string; on a real server, over gRPC (typed
``bytes_contents`` and length-prefixed raw contents)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from kserve_requests import assert_status, request, rpc_error
from serving_process import ServerProcess, served, write_config

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def _rows_model(shape: list[int]) -> ov.Model:
    """UINT8 rows -> the same values as INT32, so the answer shows what the model was fed."""
    x = ops.parameter(shape, ov.Type.u8, name="text")
    y = ops.convert(x, ov.Type.i32)
    y.output(0).set_names({"codes"})
    return ov.Model([y], [x], "rows")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("string_rows")
    models = []
    for name, shape in (("any_rows", [-1, -1]), ("two_by_four", [2, 4])):
        sm.save(_rows_model(shape), root / name)
        models.append({"name": name, "base_path": str(root / name)})
    with served(write_config(root / "config.json", models), root) as process:
        yield process


def _strings(words: list[bytes]) -> grpcclient.InferInput:
    given = grpcclient.InferInput("text", [len(words)], "BYTES")
    return given.set_data_from_numpy(np.array(words, dtype=np.object_))


def _rows(words: list[bytes]) -> np.ndarray:
    width = max(len(w) for w in words) + 1
    return np.array([list(w) + [0] * (width - len(w)) for w in words], np.int32)


@pytest.mark.parametrize("model", ["any_rows", "two_by_four"])
def test_strings_arrive_as_zero_padded_rows(client, model: str) -> None:
    words = [b"ab", b"cde"]
    got = client.infer(model, [_strings(words)]).as_numpy("codes")
    np.testing.assert_array_equal(got, _rows(words))


def test_strings_in_raw_contents_too(stub) -> None:
    words = [b"x", b"", b"yz"]
    message = request("any_rows")
    message.inputs.add(name="text", datatype="BYTES", shape=[3])
    message.raw_input_contents.append(b"".join(len(w).to_bytes(4, "little") + w for w in words))
    response = stub.ModelInfer(message)
    got = np.frombuffer(response.raw_output_contents[0], np.int32).reshape(3, 3)
    np.testing.assert_array_equal(got, _rows(words))


def test_a_string_too_long_for_a_static_width_is_refused(client) -> None:
    got = rpc_error(client.infer, "two_by_four", [_strings([b"a", b"bcdefgh"])])
    assert_status(got, INVALID, "Invalid input shape", contains="(2,8)")


def test_more_strings_than_the_batch_is_refused(client) -> None:
    got = rpc_error(client.infer, "two_by_four", [_strings([b"a", b"b", b"c"])])
    assert_status(got, INVALID, "Invalid input batch size", "Expected: 2; Actual: 3")


def test_strings_must_be_sent_as_a_list(stub) -> None:
    message = request("any_rows")
    tensor = message.inputs.add(name="text", datatype="BYTES", shape=[1, 2])
    tensor.contents.bytes_contents.extend([b"a", b"b"])
    got = rpc_error(stub.ModelInfer, message)
    assert_status(got, INVALID, "Invalid number of shape dimensions", "Expected number of input")
