"""ModelInfer answered whole in C++ (``_core.DirectInfer``): for every request it takes, the same
response as the general path (protobuf decode, Python validation, encode); every other request
declined, so that the general path words its error."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np
import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serving_models import add_constant, save, strings, two_inputs, typed_model

from ovmsx import _core
from ovmsx.config.model_config import ModelConfig
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.kserve_codec import decode_infer_request, encode_infer_response
from ovmsx.frontend.kserve_direct import answer_direct
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry
from ovmsx.status import StatusError


class Served:
    """A registry with real compiled models, and the general path to compare with."""

    def __init__(self, loop: asyncio.AbstractEventLoop, registry: ServableRegistry) -> None:
        self.loop = loop
        self.registry = registry

    def direct(self, message: bytes, model: str | None = None) -> bytes | None:
        """The direct answer of ``model`` (by default the one the message names), quick or
        not."""
        name, version = (model, "") if model else _core.infer_target(message)
        return self.registry.serving_version(name, version).compiled.direct.answer(message)

    def general(self, message: bytes) -> bytes:
        request = decode_infer_request(message)
        result = self.loop.run_until_complete(self.registry.infer(request))
        return encode_infer_response(result, request.id)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("direct")
    models = {
        "add_one": add_constant([1, 10], 1.0),
        "any_batch": add_constant([-1, 3], 1.0),
        "two_inputs": two_inputs(),
        "typed": typed_model(),
        "strings": strings(),
    }
    configs = []
    for name, model in models.items():
        save(model, base / name, version=3)
        configs.append(ModelConfig.model_validate({"name": name, "base_path": str(base / name)}))
    loop = asyncio.new_event_loop()
    dispatcher = InferenceDispatcher(loop)
    registry = ServableRegistry(dispatcher)
    loop.run_until_complete(registry.load(configs))
    yield Served(loop, registry)
    loop.run_until_complete(registry.unload())
    dispatcher.close()
    loop.close()


def _request(model: str, inputs: dict[str, np.ndarray], **fields) -> pb.ModelInferRequest:
    request = pb.ModelInferRequest(model_name=model, **fields)
    for name, data in inputs.items():
        datatype = "BOOL" if data.dtype == np.bool_ else _datatype(data.dtype)
        request.inputs.add(name=name, datatype=datatype, shape=data.shape)
        request.raw_input_contents.append(data.tobytes())
    return request


def _datatype(dtype: np.dtype) -> str:
    return {"f": "FP", "i": "INT", "u": "UINT"}[dtype.kind] + str(dtype.itemsize * 8)


def _same(served: Served, request: pb.ModelInferRequest) -> pb.ModelInferResponse:
    message = request.SerializeToString()
    direct = served.direct(message)
    assert direct is not None, "a plain request was declined"
    general = pb.ModelInferResponse.FromString(served.general(message))
    answered = pb.ModelInferResponse.FromString(direct)
    assert answered == general
    return answered


A = np.arange(4, dtype=np.float32).reshape(1, 4)
B = np.full((1, 4), 10, np.float32)


def test_a_plain_request_gets_the_general_paths_answer(served: Served) -> None:
    response = _same(served, _request("add_one", {"input": np.ones((1, 10), np.float32)}, id="7"))
    assert response.model_name == "add_one"
    assert response.model_version == "3"
    assert response.id == "7"
    assert [o.name for o in response.outputs] == ["output"]
    out = np.frombuffer(response.raw_output_contents[0], np.float32)
    np.testing.assert_array_equal(out, np.full(10, 2, np.float32))


def test_inputs_in_any_order_and_outputs_in_name_order(served: Served) -> None:
    response = _same(served, _request("two_inputs", {"b": B, "a": A}))
    assert [o.name for o in response.outputs] == ["diff", "sum"]
    diff = np.frombuffer(response.raw_output_contents[0], np.float32)
    np.testing.assert_array_equal(diff, (A - B).ravel())


def test_requested_outputs_come_in_the_order_asked(served: Served) -> None:
    request = _request("two_inputs", {"a": A, "b": B}, model_version="3")
    for name in ("sum", "diff", "sum"):
        request.outputs.add(name=name)
    response = _same(served, request)
    assert [o.name for o in response.outputs] == ["sum", "diff", "sum"]


def test_dynamic_dimensions_and_every_numeric_datatype(served: Served) -> None:
    _same(served, _request("any_batch", {"input": np.ones((5, 3), np.float32)}))
    _same(served, _request("any_batch", {"input": np.ones((0, 3), np.float32)}))
    typed = {
        "int8": np.array([1, -2], np.int8),
        "int16": np.array([3], np.int16),
        "int32": np.array([4, 5, 6], np.int32),
        "int64": np.array([7], np.int64),
        "uint8": np.array([8], np.uint8),
        "uint16": np.array([9], np.uint16),
        "uint32": np.array([10], np.uint32),
        "uint64": np.array([11], np.uint64),
        "fp64": np.array([1.5], np.float64),
        "bool": np.array([True, False]),
    }
    _same(served, _request("typed", typed))


def test_unknown_fields_are_skipped_as_protobuf_does(served: Served) -> None:
    message = _request("add_one", {"input": np.ones((1, 10), np.float32)}).SerializeToString()
    unknown = bytes([15 << 3 | 0, 42, 0x82, 0x01, 3]) + b"abc"  # varint field 15, bytes field 16
    direct = served.direct(message + unknown)
    assert direct is not None
    assert direct == served.direct(message)


def _declined(served: Served, message: bytes, model: str | None = None) -> None:
    assert served.direct(message, model) is None


def test_requests_with_something_to_report_are_declined(served: Served) -> None:
    """The general path answers each of these with its own error (or, for typed contents and
    parameters, with an answer of its own): the direct path never words one."""
    good = np.ones((1, 10), np.float32)
    cases = [
        _request("add_one", {"input": good.astype(np.float64)}),  # datatype
        _request("add_one", {"input": np.ones((1, 9), np.float32)}),  # shape
        _request("add_one", {"input": np.ones((10,), np.float32)}),  # rank
        _request("add_one", {"other": good}),  # name
        _request("add_one", {}),  # no inputs
        _request("two_inputs", {"a": A}),  # missing input
        _request("add_one", {"input": good}, id="x"),
    ]
    cases[-1].outputs.add(name="nope")  # unknown requested output
    short = _request("add_one", {"input": good})
    short.raw_input_contents[0] = short.raw_input_contents[0][:-4]  # content size
    cases.append(short)
    repeated = _request("two_inputs", {"a": A, "b": B})
    repeated.inputs[1].name = "a"  # a name twice
    cases.append(repeated)
    typed = pb.ModelInferRequest(model_name="add_one")
    typed.inputs.add(name="input", datatype="FP32", shape=[1, 10]).contents.fp32_contents.extend(
        [1.0] * 10
    )
    cases.append(typed)
    with_parameters = _request("add_one", {"input": good})
    with_parameters.parameters["key"].string_param = "value"
    cases.append(with_parameters)
    input_parameters = _request("add_one", {"input": good})
    input_parameters.inputs[0].parameters["key"].bool_param = True
    cases.append(input_parameters)
    output_parameters = _request("add_one", {"input": good})
    output_parameters.outputs.add(name="output").parameters["key"].int64_param = 1
    cases.append(output_parameters)
    text = pb.ModelInferRequest(model_name="strings")
    text.inputs.add(name="text", datatype="BYTES", shape=[1])
    text.raw_input_contents.append(b"\x02\x00\x00\x00hi")
    cases.append(text)
    for request in cases:
        _declined(served, request.SerializeToString())


def test_bytes_protobuf_would_refuse_are_declined(served: Served) -> None:
    message = _request("add_one", {"input": np.ones((1, 10), np.float32)}).SerializeToString()
    bad_id = message + bytes([3 << 3 | 2, 2, 0xC3, 0x28])  # id: invalid UTF-8
    mistyped_id = message + bytes([3 << 3 | 0, 1])  # id as a varint
    truncated = message[:-3]
    for candidate in (bad_id, mistyped_id, truncated):
        _declined(served, candidate, "add_one")
    with pytest.raises(DecodeError):
        pb.ModelInferRequest.FromString(bad_id)


def test_infer_target_reads_the_last_name_and_version() -> None:
    message = pb.ModelInferRequest(model_name="a", model_version="1").SerializeToString()
    again = pb.ModelInferRequest(model_name="b", model_version="2").SerializeToString()
    assert _core.infer_target(message) == ("a", "1")
    assert _core.infer_target(message + again) == ("b", "2")
    assert _core.infer_target(b"") == ("", "")
    assert _core.infer_target(b"\x0a\x05ab") is None  # truncated
    assert _core.infer_target(b"\x08\x01") is None  # model_name as a varint
    assert _core.infer_target(b"\x0a\x02\xc3\x28") is None  # not UTF-8


def _make_quick(served: Served, name: str) -> None:
    """Blocking inferences measure the model's own time: two_inputs is then quick."""
    compiled = served.registry.serving_version(name, "").compiled
    for _ in range(16):
        compiled.pool.infer([_core.Tensor("a", A), _core.Tensor("b", B)], True)
    assert compiled.quick


def test_answer_direct_routes_quick_models_only(served: Served) -> None:
    registry = served.registry
    message = _request("two_inputs", {"a": A, "b": B}).SerializeToString()
    _make_quick(served, "two_inputs")
    assert answer_direct(registry, message) == served.direct(message)
    assert answer_direct(registry, _request("unknown", {"a": A}).SerializeToString()) is None
    versioned = _request("two_inputs", {"a": A, "b": B}, model_version="9")
    assert answer_direct(registry, versioned.SerializeToString()) is None


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_damaged_request_is_answered_alike_or_declined(served: Served, data) -> None:
    """Whatever a byte edit does to a valid request, the direct path either declines or gives
    exactly the general path's answer; it never answers what the general path refuses."""
    _make_quick(served, "two_inputs")
    request = _request("two_inputs", {"a": A, "b": B}, id="req")
    request.outputs.add(name="diff")
    message = bytearray(request.SerializeToString())
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(message) - 1))
        edit = data.draw(st.sampled_from(["set", "drop", "insert"]))
        if edit == "set":
            message[at] = data.draw(st.integers(0, 255))
        elif edit == "drop":
            del message[at]
        else:
            message.insert(at, data.draw(st.integers(0, 255)))
    damaged = bytes(message)
    direct = answer_direct(served.registry, damaged)
    try:
        general = served.general(damaged)
    except StatusError:
        assert direct is None
        return
    if direct is not None:
        assert pb.ModelInferResponse.FromString(direct) == pb.ModelInferResponse.FromString(general)


def test_submitted_answers_match_and_dynamic_outputs_decline(served: Served) -> None:
    """``InferenceDispatcher.respond``: OpenVINO fills the response on its own thread."""
    dispatcher = served.registry.dispatcher
    static = _request("two_inputs", {"a": A, "b": B}, id="s").SerializeToString()
    compiled = served.registry.serving_version("two_inputs", "").compiled
    response = served.loop.run_until_complete(dispatcher.respond(compiled.direct, static))
    assert response is not None
    assert pb.ModelInferResponse.FromString(response) == pb.ModelInferResponse.FromString(
        served.general(static)
    )
    dynamic = _request("any_batch", {"input": np.ones((2, 3), np.float32)}).SerializeToString()
    any_batch = served.registry.serving_version("any_batch", "").compiled
    assert served.loop.run_until_complete(dispatcher.respond(any_batch.direct, dynamic)) is None


def test_a_caller_giving_up_leaves_the_response_to_the_completion(served: Served) -> None:
    """A cancelled request (client gone) stops waiting at once; the bytes OpenVINO writes
    into stay alive until the inference completes, and the pool serves on."""
    dispatcher = served.registry.dispatcher
    compiled = served.registry.serving_version("two_inputs", "").compiled
    message = _request("two_inputs", {"a": A, "b": B}).SerializeToString()

    async def cancel_some() -> list[bytes | None]:
        direct = compiled.direct
        calls = [asyncio.ensure_future(dispatcher.respond(direct, message)) for _ in range(8)]
        await asyncio.sleep(0)
        for call in calls[::2]:
            call.cancel()
        return await asyncio.gather(*calls[1::2])

    answers = served.loop.run_until_complete(cancel_some())
    expected = pb.ModelInferResponse.FromString(served.general(message))
    assert all(pb.ModelInferResponse.FromString(a) == expected for a in answers if a)
    assert served.loop.run_until_complete(dispatcher.respond(compiled.direct, message)) is not None
    assert dispatcher.in_flight == 0  # every completion arrived and let go of its buffers
