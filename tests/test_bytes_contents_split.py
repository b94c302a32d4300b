"""``bytes_contents`` cut out of a ModelInferRequest at the wire level, against protobuf itself
as the oracle (hypothesis): the rest parses to the same request without them, and each input's
elements come back packed in the KServe BYTES layout, in order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovmsx import _core, bytes_codec
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.status import InvalidArgumentError

INPUT_FORMAT = "Inputs inside buffer does not match expected format."

_strings = st.lists(st.binary(max_size=12), max_size=6)
_input = st.fixed_dictionaries(
    {
        "name": st.text(max_size=8),
        "shape": st.lists(st.integers(-3, 10**12), max_size=4),
        "strings": st.one_of(st.none(), _strings),
        "ints": st.lists(st.integers(-(2**31), 2**31 - 1), max_size=4),
        # A second `contents` occurrence, which protobuf merges into the first.
        "more": st.one_of(st.none(), _strings),
    }
)


def _encode(model: str, inputs: list[dict]) -> bytes:
    head = pb.ModelInferRequest(model_name=model, id="r").SerializeToString()
    body = b""
    for one in inputs:
        tensor = pb.ModelInferRequest.InferInputTensor(
            name=one["name"], datatype="BYTES", shape=one["shape"]
        )
        if one["strings"] is not None or one["ints"]:
            tensor.contents.bytes_contents.extend(one["strings"] or [])
            tensor.contents.int_contents.extend(one["ints"])
        encoded = tensor.SerializeToString()
        if one["more"] is not None:
            extra = pb.ModelInferRequest.InferInputTensor()
            extra.contents.bytes_contents.extend(one["more"])
            encoded += extra.SerializeToString()
        body += _length_delimited(5, encoded)
    return head + body


def _length_delimited(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@given(st.text(max_size=8), st.lists(_input, max_size=4))
def test_the_rest_and_the_packed_elements_match_protobuf(model: str, inputs: list[dict]) -> None:
    message = _encode(model, inputs)
    whole = pb.ModelInferRequest.FromString(message)
    rest, packed = _core.split_bytes_contents(message)
    expected_rest = pb.ModelInferRequest()
    expected_rest.CopyFrom(whole)
    expected_packed = []
    for index, tensor in enumerate(expected_rest.inputs):
        if not tensor.HasField("contents"):
            continue  # clearing a field of an absent contents would make it present
        strings = list(tensor.contents.bytes_contents)
        if strings:
            expected_packed.append((index, len(strings), bytes_codec.pack(strings)))
        del tensor.contents.bytes_contents[:]
    assert packed == expected_packed
    assert pb.ModelInferRequest.FromString(rest) == expected_rest
    if not expected_packed:
        assert rest is message  # nothing to cut: no copy


@pytest.mark.parametrize(
    ("message", "details"),
    [
        (b"\x2a\x05\x2a\x10", "at byte 2: field runs past the end of the message"),
        (b"\x2a\x03\x2a\x01\x42", "at byte 5: truncated varint"),
        (b"\x2a\x04\x2a\x02\x42\x05", "at byte 6: field runs past the end of the message"),
    ],
)
def test_a_malformed_input_names_the_byte(message: bytes, details: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        _core.split_bytes_contents(message)
    assert str(raised.value) == f"{INPUT_FORMAT} - malformed message {details}"
