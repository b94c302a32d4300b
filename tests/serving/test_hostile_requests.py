"""Hostile requests cost nothing lasting: memory comes back, errors stay small and exact, a
malformed body is the client's error, and a stream's error replies say which request failed.

Memory is the server's own, read from /proc: its resident size (VmRSS) before and after, and
its peak (VmHWM, reset through /proc/PID/clear_refs) during one request. Margins are generous:
they leave room for what the allocator keeps for reuse, and fail only when the request's data
itself stays behind (a hundred MiB per request) or is multiplied while it is decoded.
"""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from graph_streams import Stream
from kserve_requests import add_raw, assert_status, request, rpc_error
from serving_graphs import graph_text, python_node
from serving_process import ServerProcess, served
from tritonclient.grpc import service_pb2 as pb

INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
NAME_MISSING = "Model with requested name is not found"
NO_OF_DIMS = "Invalid number of shape dimensions"
SHAPE = "Invalid input shape"
PRECISION = "Invalid input precision"
CONTENT_SIZE = "Invalid content size of tensor proto"
VALUE_COUNT = "Invalid number of values in tensor proto container"
INPUT_FORMAT = "Inputs inside buffer does not match expected format."
UNEXPECTED = "Unexpected input"

SERVICE = "/inference.GRPCInferenceService/"
MIB = 1 << 20
GIB = 1 << 30
BIG = 100 * MIB  # bytes of tensor data in each large request
BIG_SHAPE = [1, BIG // 4]  # FP32 elements that take BIG bytes
REPEATS = 10
# Ten requests leaving their data behind would hold 1,000 MiB more. Freed memory that glibc
# keeps in its arenas for reuse (gRPC reads a message in pieces on its own threads) goes back to
# the kernel once no call is in flight after a large message (ovmsx/frontend/grpc_core.py);
# without that, ten requests that hold nothing still grew the server by 190-360 MiB here. The
# limit sits below both, and above what the allocator's own bookkeeping may keep after tests
# that ran before (up to 71 MiB seen once in a full run, where 60 MiB was the limit).
RSS_GROWTH_LIMIT = BIG
WARM_UP_CALLS = 2
SETTLE_SECONDS = 3.0

STRINGS = 10_000_000  # empty BYTES elements in one request: 40 MB of length prefixes raw

# The server's cap on a quoted client text and shape (ovmsx.quoting), and on a whole message.
QUOTED = 256
QUOTED_DIMS = 16
MESSAGE_BYTES = 2048

BYTE_SIZE = """
import numpy as np
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs):
        return [Tensor("size", np.array([memoryview(inputs[0]).nbytes], np.int64))]
"""


# -- the server --------------------------------------------------------------------------------


def _write_config(root: Path) -> Path:
    models = root / "models"
    sm.save(sm.add_constant([1, 10], 1, "add_one"), models / "add_one")
    sm.save(sm.add_constant([-1, -1], 1, "dynamic"), models / "dynamic")
    sm.save(sm.strings(), models / "strings")
    graph = root / "byte_size"
    graph.mkdir()
    (graph / "byte_size.py").write_text(textwrap.dedent(BYTE_SIZE))
    node = python_node("size", "byte_size.py", ["INPUT:text"], ["OUTPUT:size"])
    (graph / "graph.pbtxt").write_text(
        graph_text(["OVMS_PY_TENSOR:text"], ["OVMS_PY_TENSOR:size"], [node])
    )
    plugin = {"INFERENCE_PRECISION_HINT": "f32"}
    config = {
        "model_config_list": [
            {"config": {"name": n, "base_path": str(models / n), "plugin_config": plugin}}
            for n in ("add_one", "dynamic", "strings")
        ],
        "mediapipe_config_list": [{"name": "byte_size", "base_path": str(graph)}],
    }
    path = root / "config.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("hostile")
    with served(_write_config(root), root) as process:
        yield process
    assert "Traceback" not in process.log(), process.log()


@pytest.fixture(scope="module")
def channel(server: ServerProcess) -> Iterator[grpc.Channel]:
    options = [("grpc.max_send_message_length", GIB), ("grpc.max_receive_message_length", GIB)]
    with grpc.insecure_channel(server.url, options=options) as opened:
        yield opened


def _infer(channel: grpc.Channel, message: bytes) -> bytes:
    """ModelInfer with a body sent exactly as given."""
    return channel.unary_unary(SERVICE + "ModelInfer")(message)


def _stream(channel: grpc.Channel, messages: list[bytes]) -> list[pb.ModelStreamInferResponse]:
    call = channel.stream_stream(
        SERVICE + "ModelStreamInfer", response_deserializer=pb.ModelStreamInferResponse.FromString
    )
    return list(call(iter(messages)))


def _answer_and_error(
    answers: list[pb.ModelStreamInferResponse],
) -> tuple[pb.ModelStreamInferResponse, pb.ModelStreamInferResponse]:
    """A graph stream's one output and one error reply, whichever was sent first (the graph
    answers on its own time, a request it cannot take is answered at once)."""
    assert len(answers) == 2, answers
    errors = [a for a in answers if a.error_message]
    outputs = [a for a in answers if not a.error_message]
    assert len(errors) == len(outputs) == 1, answers
    return outputs[0], errors[0]


# -- memory of the server ----------------------------------------------------------------------


def _status_kib(server: ServerProcess, field: str) -> int:
    with open(f"/proc/{server.process.pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{server.process.pid}/status")


def _rss(server: ServerProcess) -> int:
    return _status_kib(server, "VmRSS") * 1024


def _peak_during(server: ServerProcess, send) -> tuple[int, object]:
    """How far the server's resident size rose above where it was while ``send()`` ran."""
    before = _rss(server)
    with open(f"/proc/{server.process.pid}/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM to the current resident size (proc(5))
    answer = send()
    return _status_kib(server, "VmHWM") * 1024 - before, answer


def _growth_over_repeats(server: ServerProcess, send) -> int:
    """RSS growth over REPEATS calls of ``send()``, after two calls have warmed the allocator
    (gRPC may read the first two messages on different threads, so into different arenas).
    The server gives memory back once its last call has ended, which can be just after the
    client has its answer: the smallest growth seen within a few seconds counts."""
    for _ in range(WARM_UP_CALLS):
        send()
    before = _rss(server)
    for _ in range(REPEATS):
        send()
    growth = _rss(server) - before
    deadline = time.monotonic() + SETTLE_SECONDS
    while growth >= RSS_GROWTH_LIMIT and time.monotonic() < deadline:
        time.sleep(0.05)
        growth = min(growth, _rss(server) - before)
    return growth


def _big_request(
    model: str, shape: list[int], name: str = "input", datatype: str = "FP32"
) -> bytes:
    """A serialized request for ``model`` with one input carrying BIG raw bytes."""
    message = request(model)
    message.inputs.add(name=name, datatype=datatype, shape=shape)
    message.raw_input_contents.append(bytes(BIG))
    return message.SerializeToString()


# -- 1. a rejected large request frees its memory at once --------------------------------------

REJECTED = [
    # (model, shape, gRPC code, OVMS base message)
    ("no_such_model", BIG_SHAPE, NOT_FOUND, NAME_MISSING),
    ("add_one", BIG_SHAPE, INVALID, SHAPE),
    ("dynamic", [1, 5], INVALID, CONTENT_SIZE),
]


@pytest.mark.parametrize(("model", "shape", "code", "base"), REJECTED)
def test_rejected_large_requests_free_their_memory(
    server: ServerProcess, channel: grpc.Channel, model: str, shape, code, base: str
) -> None:
    message = _big_request(model, shape)

    def send() -> None:
        assert_status(rpc_error(_infer, channel, message), code, base)

    assert _growth_over_repeats(server, send) < RSS_GROWTH_LIMIT


def test_large_requests_rejected_in_a_model_stream_free_their_memory(
    server: ServerProcess, channel: grpc.Channel
) -> None:
    message = _big_request("add_one", BIG_SHAPE)

    def send() -> None:
        (answer,) = _stream(channel, [message])
        assert answer.error_message.startswith(SHAPE + " - Expected: (1,10)")

    assert _growth_over_repeats(server, send) < RSS_GROWTH_LIMIT


def test_a_stream_opened_on_an_unknown_model_frees_its_memory(
    server: ServerProcess, channel: grpc.Channel
) -> None:
    message = _big_request("no_such_model", BIG_SHAPE)

    def send() -> None:
        assert_status(rpc_error(_stream, channel, [message]), NOT_FOUND, NAME_MISSING)

    assert _growth_over_repeats(server, send) < RSS_GROWTH_LIMIT


def test_large_requests_rejected_in_a_graph_stream_free_their_memory(
    server: ServerProcess, channel: grpc.Channel
) -> None:
    body = _big_request("byte_size", [BIG], "not_an_input", "UINT8")

    def send() -> None:
        (answer,) = _stream(channel, [body])
        assert answer.error_message == (
            f"{UNEXPECTED} - not_an_input is unexpected; partial deserialization of first request"
        )

    assert _growth_over_repeats(server, send) < RSS_GROWTH_LIMIT


def test_a_graph_stream_keeps_no_request_it_has_answered(
    server: ServerProcess, channel: grpc.Channel
) -> None:
    # The stream and its graph instance reference each other until the collector runs; the
    # requests they were given must not wait for that.
    body = _big_request("byte_size", [BIG], "text", "UINT8")

    def send() -> None:
        (answer,) = _stream(channel, [body])
        size = np.frombuffer(answer.infer_response.raw_output_contents[0], np.int64)
        assert size.tolist() == [BIG]

    assert _growth_over_repeats(server, send) < RSS_GROWTH_LIMIT


# -- 2. ten million tiny BYTES elements cost about what the request weighs ---------------------


def _strings_request(model: str, name: str, shape: list[int], typed: bool) -> bytes:
    message = request(model)
    tensor = message.inputs.add(name=name, datatype="BYTES", shape=shape)
    if typed:
        tensor.contents.bytes_contents.extend([b""] * STRINGS)
    else:
        message.raw_input_contents.append(bytes(4 * STRINGS))  # ten million zero lengths
    return message.SerializeToString()


@pytest.mark.parametrize("typed", [False, True], ids=["raw", "bytes_contents"])
def test_millions_of_strings_against_a_smaller_shape_are_refused_cheaply(
    server: ServerProcess, channel: grpc.Channel, typed: bool
) -> None:
    body = _strings_request("strings", "text", [5], typed)
    peak, got = _peak_during(server, lambda: rpc_error(_infer, channel, body))
    details = (
        f"Expected: 5 values; Actual: {STRINGS} values; input name: text"
        if typed
        else f"BYTES buffer of {4 * STRINGS} bytes holds {STRINGS} elements; the shape needs 5"
    )
    assert_status(got, INVALID, VALUE_COUNT, details)
    # Decoding used to take ~10 times the body (40 MB raw: ~200 MB of element views; 20 MB
    # typed: ~400 MB of protobuf element objects) before the count was compared.
    assert peak < 2 * len(body) + 64 * MIB, f"peak {peak >> 20} MiB for {len(body) >> 20} MiB"


@pytest.mark.parametrize("typed", [False, True], ids=["raw", "bytes_contents"])
def test_millions_of_strings_reach_a_python_node_packed_once(
    server: ServerProcess, channel: grpc.Channel, typed: bool
) -> None:
    body = _strings_request("byte_size", "text", [STRINGS], typed)
    peak, answer = _peak_during(server, lambda: _infer(channel, body))
    response = pb.ModelInferResponse.FromString(answer)
    assert [o.name for o in response.outputs] == ["size"]
    assert np.frombuffer(response.raw_output_contents[0], np.int64).tolist() == [4 * STRINGS]
    assert peak < 2 * len(body) + 64 * MIB, f"peak {peak >> 20} MiB for {len(body) >> 20} MiB"


# -- 3. errors quote client input up to a cap ---------------------------------------------------

HUGE_NAME = "m" * MIB


def _quoted(text: str) -> str:
    return f"{text[:QUOTED]}... ({len(text)} characters)"


def _assert_capped_name_error(got: tuple[grpc.StatusCode, str]) -> None:
    """NOT_FOUND naming the first characters of the name and its length."""
    assert got == (NOT_FOUND, f"{NAME_MISSING} - name: {_quoted(HUGE_NAME)}")


def test_a_megabyte_model_name_on_model_infer_is_not_found(server: ServerProcess) -> None:
    with grpcclient.InferenceServerClient(server.url) as client:
        given = grpcclient.InferInput("input", [1, 10], "FP32")
        given.set_data_from_numpy(np.zeros((1, 10), np.float32))
        _assert_capped_name_error(rpc_error(client.infer, HUGE_NAME, [given]))


def test_a_megabyte_model_name_on_metadata_and_ready_is_not_found(server: ServerProcess) -> None:
    with grpcclient.InferenceServerClient(server.url) as client:
        _assert_capped_name_error(rpc_error(client.get_model_metadata, HUGE_NAME))
        _assert_capped_name_error(rpc_error(client.is_model_ready, HUGE_NAME))


def test_a_megabyte_model_name_opening_a_stream_is_quoted(channel: grpc.Channel) -> None:
    message = add_raw(request(HUGE_NAME), "input", np.zeros((1, 10), np.float32))
    got = rpc_error(_stream, channel, [message.SerializeToString()])
    assert got == (NOT_FOUND, f"{NAME_MISSING} - {_quoted(HUGE_NAME)}")


def test_a_rank_ten_thousand_shape_is_quoted_by_its_first_dims(server: ServerProcess) -> None:
    shape = [1] * 10_000
    with grpcclient.InferenceServerClient(server.url) as client:
        given = grpcclient.InferInput("input", shape, "FP32")
        given._raw_content = bytes(4)  # numpy has no arrays of rank 10,000; one element's bytes
        got = rpc_error(client.infer, "add_one", [given])
    dims = ",".join(["1"] * QUOTED_DIMS)
    expected = f"Expected: (1,10); Actual: ({dims},...) (rank 10000); input name: input"
    assert got == (INVALID, f"{NO_OF_DIMS} - {expected}")


def test_a_megabyte_datatype_is_quoted(channel: grpc.Channel) -> None:
    datatype = "D" * MIB
    message = add_raw(request("add_one"), "input", np.zeros((1, 10), np.float32), datatype)
    got = rpc_error(_infer, channel, message.SerializeToString())
    expected = f"Expected: FP32; Actual: {_quoted(datatype)}; input name: input"
    assert got == (INVALID, f"{PRECISION} - {expected}")


def test_a_megabyte_input_name_in_a_graph_stream_is_quoted(channel: grpc.Channel) -> None:
    name = "n" * MIB
    message = add_raw(request("byte_size"), name, np.zeros(4, np.uint8))
    (answer,) = _stream(channel, [message.SerializeToString()])
    assert answer.error_message == (
        f"{UNEXPECTED} - {_quoted(name)} is unexpected; partial deserialization of first request"
    )


# -- 4. a malformed body is the client's error --------------------------------------------------


def _good_request() -> pb.ModelInferRequest:
    return add_raw(request("add_one"), "input", np.zeros((1, 10), np.float32))


MALFORMED = {
    # name: (body, what the details say)
    "garbage": (b"\xff" * 64, "request is not a valid ModelInferRequest: malformed message"),
    "not utf-8 model name": (b"\x0a\x02\xff\xfe", "request is not a valid ModelInferRequest"),
    "truncated raw contents": (
        _good_request().SerializeToString()[:-7],
        "request is not a valid ModelInferRequest: malformed message at byte ",
    ),
    "truncated tensor": (
        b"\x2a\x10\x0a\x05input",
        "request is not a valid ModelInferRequest: malformed message at byte 2: field runs past",
    ),
    "end group tag": (b"\x0c", "request is not a valid ModelInferRequest"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_body_is_invalid_argument(channel: grpc.Channel, case: str) -> None:
    body, details = MALFORMED[case]
    assert_status(rpc_error(_infer, channel, body), INVALID, INPUT_FORMAT, details)


def test_fields_of_the_wrong_wire_type_are_unknown_fields(channel: grpc.Channel) -> None:
    # raw_input_contents (7) as a varint and inputs (5) as a fixed32: protobuf keeps fields whose
    # wire type does not match as unknown ones, so the request has a name and nothing else.
    body = request("add_one").SerializeToString() + b"\x38\x01" + b"\x2d\x00\x00\x00\x00"
    got = rpc_error(_infer, channel, body)
    assert got == (INVALID, "Invalid number of inputs - Expected: 1; Actual: 0")


def test_a_malformed_body_opening_a_stream_ends_it_as_invalid_argument(
    channel: grpc.Channel,
) -> None:
    got = rpc_error(_stream, channel, [b"\xff" * 8])
    assert_status(got, INVALID, INPUT_FORMAT, "request is not a valid ModelInferRequest")


def test_a_malformed_body_later_in_a_stream_is_answered_and_the_stream_goes_on(
    channel: grpc.Channel,
) -> None:
    good = _good_request().SerializeToString()
    first, error, last = _stream(channel, [good, b"\xff" * 8, good])
    assert first.infer_response.model_name == last.infer_response.model_name == "add_one"
    assert error.error_message.startswith(
        f"{INPUT_FORMAT} - request is not a valid ModelInferRequest: malformed message"
    )


def test_a_malformed_body_later_in_a_graph_stream_is_answered(channel: grpc.Channel) -> None:
    good = add_raw(request("byte_size"), "text", np.zeros(3, np.uint8)).SerializeToString()
    first, error = _answer_and_error(_stream(channel, [good, b"\xff" * 8]))
    assert np.frombuffer(first.infer_response.raw_output_contents[0], np.int64).tolist() == [3]
    assert error.error_message.startswith(f"{INPUT_FORMAT} - request is not a valid")
    assert error.error_message.endswith("; partial deserialization of subsequent requests")


@pytest.mark.parametrize("method", ["ModelMetadata", "ModelReady"])
def test_garbage_on_the_small_rpcs_is_invalid_argument(channel: grpc.Channel, method: str) -> None:
    code, message = rpc_error(channel.unary_unary(SERVICE + method), b"\xff" * 16)
    assert code == INVALID
    assert f"{method}Request" in message


# -- 5. a stream's error replies name the request ----------------------------------------------


def test_a_model_streams_error_reply_carries_the_request_id_and_model(
    server: ServerProcess, channel: grpc.Channel
) -> None:
    bad = add_raw(request("dynamic", request_id="req-7"), "input", np.zeros((2, 2), np.int32))
    (answer,) = _stream(channel, [bad.SerializeToString()])
    assert answer.error_message == f"{PRECISION} - Expected: FP32; Actual: INT32; input name: input"
    assert answer.infer_response.id == "req-7"
    assert answer.infer_response.model_name == "dynamic"
    # tritonclient hands the same reply to its stream callback as an error.
    with Stream(server.url) as stream:
        given = grpcclient.InferInput("input", [2, 2], "INT32")
        given.set_data_from_numpy(np.zeros((2, 2), np.int32))
        stream.client.async_stream_infer("dynamic", [given], request_id="req-8")
        assert stream.error() == answer.error_message


def test_a_graph_streams_error_reply_carries_the_request_id_and_graph(
    channel: grpc.Channel,
) -> None:
    good = add_raw(request("byte_size"), "text", np.zeros(3, np.uint8))
    bad = add_raw(request("byte_size", request_id="req-9"), "other", np.zeros(3, np.uint8))
    _, error = _answer_and_error(
        _stream(channel, [good.SerializeToString(), bad.SerializeToString()])
    )
    assert error.error_message == (
        f"{UNEXPECTED} - other is unexpected; partial deserialization of subsequent requests"
    )
    assert error.infer_response.id == "req-9"
    assert error.infer_response.model_name == "byte_size"


def test_an_unreadable_request_in_a_stream_gets_an_error_without_an_id(
    channel: grpc.Channel,
) -> None:
    good = _good_request().SerializeToString()
    _, error = _stream(channel, [good, b"\xff" * 8])
    assert error.error_message
    assert error.infer_response.id == ""
