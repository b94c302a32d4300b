"""The core's reading of plain KServe requests into Tensors, and its writing of responses from
Tensors: what protobuf reads and writes, byte for byte, or a decline for anything else."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from ovmsx import _core
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.kserve_codec import decode_infer_request


def _request(**inputs: tuple[str, list[int], bytes]) -> pb.ModelInferRequest:
    message = pb.ModelInferRequest(model_name="graph", model_version="1", id="ask-7")
    for name, (datatype, shape, raw) in inputs.items():
        message.inputs.add(name=name, datatype=datatype, shape=shape)
        message.raw_input_contents.append(raw)
    return message


MIXED = _request(
    a=("FP32", [2, 2], np.arange(4, dtype=np.float32).tobytes()),
    b=("BYTES", [2], b"\x01\x00\x00\x00x\x02\x00\x00\x00yz"),  # taken with its prefixes
    c=("MY_TYPE", [3], b"\x00\x01\x02\x03\x04"),  # custom: any size, 1-D bytes
    d=("INT64", [], np.int64(-5).tobytes()),  # a scalar
)


def test_plain_inputs_read_as_the_general_path_reads_them() -> None:
    message = MIXED.SerializeToString()
    name, version, request_id, tensors = _core.read_raw_inputs(message)
    assert (name, version, request_id) == ("graph", "1", "ask-7")
    general = decode_infer_request(message)
    expected = [given.to_graph_tensor(True) for given in general.inputs]
    assert len(tensors) == len(expected) == 4
    for ours, theirs in zip(tensors, expected, strict=True):
        described = (theirs.name, theirs.datatype, theirs.shape)
        assert (ours.name, ours.datatype, ours.shape) == described
        assert bytes(ours.data) == bytes(theirs.data)
        assert memoryview(ours).format == memoryview(theirs).format
    np.testing.assert_array_equal(np.asarray(tensors[0]), np.arange(4).reshape(2, 2))


def test_tensors_keep_the_message_alive() -> None:
    tensors = _core.read_raw_inputs(MIXED.SerializeToString())[3]
    gc.collect()
    assert np.asarray(tensors[0]).tolist() == [[0.0, 1.0], [2.0, 3.0]]


def _with(change) -> bytes:
    message = pb.ModelInferRequest()
    message.CopyFrom(MIXED)
    change(message)
    return message.SerializeToString()


@pytest.mark.parametrize(
    "message",
    [
        _with(lambda m: m.parameters["OVMS_MP_TIMESTAMP"].__setattr__("int64_param", 3)),
        _with(lambda m: m.inputs[0].parameters["p"].__setattr__("bool_param", True)),
        _with(lambda m: m.inputs[0].contents.fp32_contents.append(1.0)),
        _with(lambda m: m.raw_input_contents.pop()),  # fewer contents than inputs
        _with(lambda m: m.raw_input_contents.__setitem__(0, b"\x00" * 15)),  # FP32 size wrong
        _with(lambda m: m.inputs[0].shape.__setitem__(0, -2)),  # a negative dim
        _with(lambda m: m.outputs.add(name="x").parameters["p"].__setattr__("bool_param", True)),
        _with(lambda m: [m.ClearField("inputs"), m.ClearField("raw_input_contents")]),
        MIXED.SerializeToString()[:-3],  # cut short
        MIXED.SerializeToString().replace(b"ask-7", b"ask\xff7"),  # id not UTF-8
        MIXED.SerializeToString().replace(b"MY_TYPE", b"MY\xfeTYPE"),  # datatype not UTF-8
    ],
    ids=[
        "request-parameter",
        "input-parameter",
        "typed-contents",
        "contents-count",
        "size",
        "negative-dim",
        "output-parameter",
        "no-inputs",
        "truncated",
        "id-utf8",
        "datatype-utf8",
    ],
)
def test_anything_else_is_left_to_the_general_path(message: bytes) -> None:
    assert _core.read_raw_inputs(message) is None


@pytest.mark.parametrize("request_id", ["", "ask-7"])
@pytest.mark.parametrize("stamp", [0, -1, 2**63 - 1, 1_732_000_000_000_000])
def test_a_response_is_written_as_protobuf_writes_it(request_id: str, stamp: int) -> None:
    outputs = [
        ("b_out", _core.Tensor("b_out", np.arange(6, dtype=np.int16).reshape(2, 3))),
        ("a_out", _core.Tensor("a_out", np.float64(2.5))),  # a scalar: no shape field
        ("", _core.bytes_to_padded([b"x", b"yz"], "s")),  # another datatype, an empty name
    ]
    ours = _core.encode_tensor_response("graph", "1", request_id, outputs, ("TS", stamp))
    theirs = pb.ModelInferResponse(model_name="graph", model_version="1", id=request_id)
    theirs.parameters["TS"].int64_param = stamp
    for name, tensor in outputs:
        theirs.outputs.add(name=name, datatype=tensor.datatype, shape=tensor.shape)
        theirs.raw_output_contents.append(bytes(tensor.data))
    assert ours == theirs.SerializeToString()
    without = _core.encode_tensor_response("graph", "1", request_id, outputs)
    theirs.ClearField("parameters")
    assert without == theirs.SerializeToString()
