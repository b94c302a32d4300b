"""OpenVINOModelServerSessionCalculator and OpenVINOInferenceCalculator end to end: graphs that
call real models on a real server, over ModelInfer and ModelStreamInfer (COMPAT §12)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from graph_streams import Stream, tensor_input, timestamp_of
from serving_graphs_openvino import BROKEN_GRAPHS, PIPELINE, write_calculator_graphs
from serving_process import ServerProcess, served
from tritonclient.utils import InferenceServerException

X = np.arange(10, dtype=np.float32).reshape(1, 10)
EXECUTION = "Mediapipe execution failed. MP status - INTERNAL: "


@pytest.fixture(scope="module")
def ov_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    config = write_calculator_graphs(tmp_path_factory.mktemp("ov_graphs"))
    with served(config, tmp_path_factory.mktemp("ov_srv")) as process:
        yield process


@pytest.fixture(scope="module")
def client(ov_server: ServerProcess) -> Iterator[grpcclient.InferenceServerClient]:
    with grpcclient.InferenceServerClient(ov_server.url) as triton:
        yield triton


def _fp32(name: str, data: np.ndarray) -> grpcclient.InferInput:
    return tensor_input(name, np.ascontiguousarray(data, np.float32))


def _typed(name: str, data: np.ndarray, datatype: str) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, list(data.shape), datatype)
    given.set_data_from_numpy(data)
    return given


def _refused(client, graph: str, inputs: list) -> InferenceServerException:
    with pytest.raises(InferenceServerException) as caught:
        client.infer(graph, inputs)
    return caught.value


def _failed_in(node: str, reason: str) -> str:
    return f'{EXECUTION}Calculator::Process() for node "{node}" failed: {reason}'


# -- load-time contract ----------------------------------------------------------------------------


@pytest.mark.parametrize("graph", sorted(BROKEN_GRAPHS))
def test_contract_error_keeps_the_graph_unloaded_naming_the_node(client, graph) -> None:
    _, message = BROKEN_GRAPHS[graph]
    assert not client.is_model_ready(graph)
    error = _refused(client, graph, [_fp32("in", X)])
    assert error.status() == "StatusCode.UNAVAILABLE"
    assert error.message().startswith(f"Mediapipe is not loaded yet - {graph}: {message}")


# -- answers ---------------------------------------------------------------------------------------


def test_model_behind_a_graph_answers_as_ovms_does(client) -> None:
    result = client.infer(
        "dummy_full", [_fp32("in", X)], request_id="req-7", parameters={"OVMS_MP_TIMESTAMP": 4321}
    )
    np.testing.assert_array_equal(result.as_numpy("out"), X + 1)
    response = result.get_response()
    assert (response.model_name, response.model_version, response.id) == (
        "dummy_full",
        "1",
        "req-7",
    )
    assert timestamp_of(result) == 4321


def test_response_carries_a_timestamp_when_none_was_sent(client) -> None:
    result = client.infer("dummy_full", [_fp32("in", X)])
    assert result.get_response().parameters["OVMS_MP_TIMESTAMP"].HasField("int64_param")


def test_two_inputs_mapped_to_a_two_input_model_with_the_request_id_echoed(client) -> None:
    in2 = np.full((1, 10), 0.5, np.float32)
    result = client.infer("add_full", [_fp32("in1", X), _fp32("in2", in2)], request_id="my_id")
    np.testing.assert_array_equal(result.as_numpy("out"), X + in2)
    assert result.get_response().id == "my_id"


def test_seed_graph_runs_two_models_in_a_row(client) -> None:
    in2 = np.full((1, 10), 3, np.float32)
    result = client.infer("seed_chain", [_fp32("in1", X), _fp32("in2", in2)])
    np.testing.assert_array_equal(result.as_numpy("out"), X + 1 + in2)


def test_tags_without_maps_are_the_model_tensor_names(client) -> None:
    # The inference node has no options: tag B is the model input "B", tag A its output "A".
    result = client.infer("uppercase", [_fp32("in", X)])
    np.testing.assert_array_equal(result.as_numpy("out"), X + 1)


def test_two_inference_nodes_share_one_session(client) -> None:
    result = client.infer("shared_session", [_fp32("in_1", X), _fp32("in_2", 2 * X)])
    assert sorted(o.name for o in result.get_response().outputs) == ["out_1", "out_2"]
    np.testing.assert_array_equal(result.as_numpy("out_1"), X + 1)
    np.testing.assert_array_equal(result.as_numpy("out_2"), 2 * X + 1)


def test_model_outputs_no_tag_names_are_dropped(client) -> None:
    a, b = np.full((1, 4), 5, np.float32), np.full((1, 4), 2, np.float32)
    result = client.infer("extra_outputs", [_fp32("a", a), _fp32("b", b)])
    assert [o.name for o in result.get_response().outputs] == ["out"]
    np.testing.assert_array_equal(result.as_numpy("out"), a + b)  # "sum"; "diff" is dropped


@pytest.mark.parametrize("graph", ["pipeline_servable", "pipeline_servable_v7"])
def test_dag_pipeline_as_the_servable_equals_its_steps_by_hand(client, graph) -> None:
    # The DAG runs "dummy" twice; the version a graph asks of a DAG is ignored, as in OVMS.
    data = np.random.default_rng(3).uniform(-5, 5, (1, 10)).astype(np.float32)
    by_hand = data
    for _ in range(2):
        by_hand = client.infer("dummy", [_fp32("b", by_hand)]).as_numpy("a")
    through_dag = client.infer(PIPELINE, [_fp32("numbers", data)]).as_numpy("result")
    np.testing.assert_array_equal(through_dag, by_hand)
    # Enough requests for the server to settle how it runs the graph; each must answer.
    for _ in range(12):
        answer = client.infer(graph, [_fp32("in", data)], client_timeout=20).as_numpy("out")
        np.testing.assert_array_equal(answer, by_hand)


def test_many_requests_answer_right_and_failures_stay_reported(client) -> None:
    # Past the first few requests the server may run a quick graph differently (on its loop).
    for step in range(16):
        in2 = np.full((1, 10), step, np.float32)
        result = client.infer("seed_chain", [_fp32("in1", X), _fp32("in2", in2)])
        np.testing.assert_array_equal(result.as_numpy("out"), X + 1 + in2)
    error = _refused(client, "seed_chain", [_fp32("in1", X[:, :5]), _fp32("in2", X)])
    assert error.message() == _failed_in(
        "dummy_node",
        "Inference of dummy failed: Invalid input shape - Expected: (1,10); Actual: (1,5); "
        "input name: b",
    )
    result = client.infer("seed_chain", [_fp32("in1", X), _fp32("in2", X)])
    np.testing.assert_array_equal(result.as_numpy("out"), 2 * X + 1)


# -- errors per request ----------------------------------------------------------------------------


def test_unknown_servable_fails_each_request_with_a_precondition_error(client) -> None:
    assert client.is_model_ready("unknown_servable")  # the graph loads; its session cannot open
    for _ in range(2):
        error = _refused(client, "unknown_servable", [_fp32("in", X)])
        assert error.status() == "StatusCode.UNKNOWN"
        assert error.message() == (
            "Mediapipe graph precondition failed - FAILED_PRECONDITION: Calculator::Open() for "
            'node "session" failed: OpenVINOModelServerSessionCalculator failed to load the model '
            "(no_such_model: Model with requested name is not found - name: no_such_model)"
        )


@pytest.mark.parametrize(
    ("graph", "inputs", "reason"),
    [
        (
            "wrong_input_name",
            [("in", X)],
            "Inference of dummy failed: Missing input with specific name - Required input: b",
        ),
        (
            "extra_input",
            [("in", X), ("in2", X)],
            "Inference of dummy failed: Invalid number of inputs - Expected: 1; Actual: 2",
        ),
        ("missing_output", [("in", X)], "Could not find: nope in inference output"),
    ],
)
def test_tag_naming_no_model_tensor_is_an_execution_error(client, graph, inputs, reason) -> None:
    error = _refused(client, graph, [_fp32(name, data) for name, data in inputs])
    assert error.status() == "StatusCode.INVALID_ARGUMENT"
    assert error.message() == _failed_in("infer", reason)


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        (
            _typed("in", X.astype(np.int32), "INT32"),
            "Invalid input precision - Expected: FP32; Actual: INT32; input name: b",
        ),
        (
            _typed("in", X[:, :5].copy(), "FP32"),
            "Invalid input shape - Expected: (1,10); Actual: (1,5); input name: b",
        ),
    ],
    ids=["datatype", "shape"],
)
def test_client_tensor_the_model_refuses_keeps_the_model_message(client, given, reason) -> None:
    error = _refused(client, "dummy_full", [given])
    assert error.status() == "StatusCode.INVALID_ARGUMENT"
    assert error.message() == _failed_in("infer", f"Inference of dummy failed: {reason}")


# -- list tags (OVTENSORS) and MediaPipe tensors (TENSOR) ------------------------------------------

V = np.array([[1, 2, 3]], np.float32)
# fan_out's outputs, by name: alpha = x + 1, mid = x + 10, zeta = x + 100.
ALPHA, MID, ZETA = V + 1, V + 10, V + 100


@pytest.mark.parametrize(
    ("graph", "rows"),
    [
        ("vectors_by_name", [ALPHA, MID, ZETA]),  # empty output_order_list: all, by name
        ("vectors_output_order", [ZETA, ALPHA, MID]),  # output_order_list's order
        ("vectors_input_order", [ZETA, MID, ALPHA]),  # input_order_list r, q, p
    ],
)
def test_list_tags_follow_the_order_lists(client, graph, rows) -> None:
    result = client.infer(graph, [_fp32("x", V)])
    np.testing.assert_array_equal(result.as_numpy("out"), np.concatenate(rows))


def test_list_longer_than_input_order_list_is_an_execution_error(client) -> None:
    error = _refused(client, "vectors_size_mismatch", [_fp32("x", V)])
    assert error.message() == _failed_in(
        "stack", "input_order_list size does not match the input vector size."
    )


def test_output_order_list_naming_no_output_is_an_execution_error(client) -> None:
    error = _refused(client, "vectors_missing_output", [_fp32("x", V)])
    assert error.message() == _failed_in("fan", "Could not find: nope in inference output")


def test_mediapipe_tensor_tags_carry_fp32_through_the_model(client) -> None:
    result = client.infer("mp_tensor", [_fp32("in", X)])
    assert result.get_response().outputs[0].datatype == "FP32"
    np.testing.assert_array_equal(result.as_numpy("out"), X + 1)


@pytest.mark.parametrize(
    ("graph", "direction"),
    [("mp_tensor_int64_in", "deserialization"), ("mp_tensor_int64_out", "serialization")],
)
def test_int64_behind_a_tensor_tag_is_refused(client, graph, direction) -> None:
    error = _refused(client, graph, [_typed("in", np.array([1, 2], np.int64), "INT64")])
    assert error.status() == "StatusCode.INVALID_ARGUMENT"
    assert error.message() == _failed_in(
        "infer", f"Not supported precision for Mediapipe tensor {direction}: INT64"
    )


# -- streaming -------------------------------------------------------------------------------------


def _seed_inputs(in1: np.ndarray, in2: np.ndarray) -> list:
    return [_fp32("in1", in1), _fp32("in2", in2)]


def test_stream_answers_every_request_through_both_models(ov_server) -> None:
    with Stream(ov_server.url) as stream:
        for step in range(4):
            stream.send("seed_chain", _seed_inputs(X + step, X * step), timestamp=10 + step)
            result = stream.result()
            assert timestamp_of(result) == 10 + step
            np.testing.assert_array_equal(result.as_numpy("out"), X + step + 1 + X * step)


def test_stream_reports_an_unknown_input_and_goes_on(ov_server) -> None:
    with Stream(ov_server.url) as stream:
        stream.send("seed_chain", [_fp32("nope", X)], timestamp=1)
        assert stream.error() == (
            "Unexpected input - nope is unexpected; partial deserialization of first request"
        )
        stream.send("seed_chain", _seed_inputs(X, X), timestamp=2)
        np.testing.assert_array_equal(stream.result().as_numpy("out"), 2 * X + 1)


def test_stream_ends_on_a_model_error_and_the_server_keeps_serving(ov_server, client) -> None:
    with Stream(ov_server.url) as stream:
        stream.send("seed_chain", _seed_inputs(X, X), timestamp=1)
        stream.result()
        stream.send("seed_chain", _seed_inputs(X[:, :5].copy(), X), timestamp=2)
        assert stream.error() == "[StatusCode.INVALID_ARGUMENT] " + _failed_in(
            "dummy_node",
            "Inference of dummy failed: Invalid input shape - Expected: (1,10); Actual: (1,5); "
            "input name: b",
        )
        with pytest.raises(InferenceServerException, match="no longer in valid state"):
            stream.send("seed_chain", _seed_inputs(X, X), timestamp=3)
        assert stream.nothing_more()
    with Stream(ov_server.url) as fresh:
        fresh.send("seed_chain", _seed_inputs(X, X), timestamp=1)
        np.testing.assert_array_equal(fresh.result().as_numpy("out"), 2 * X + 1)
    result = client.infer("seed_chain", _seed_inputs(X, X))
    np.testing.assert_array_equal(result.as_numpy("out"), 2 * X + 1)


def test_stream_packets_of_one_request_apart_fail_the_inference_node(ov_server) -> None:
    # in1 at 1, in2 at 2: "add" sees its first input at 1 without the second.
    with Stream(ov_server.url) as stream:
        stream.send("seed_chain", [_fp32("in1", X)], timestamp=1)
        stream.send("seed_chain", [_fp32("in2", X)], timestamp=2)
        assert stream.error() == "[StatusCode.INVALID_ARGUMENT] " + _failed_in(
            "add_node",
            "OpenVINOInferenceCalculator expects all input packets at the same time for each "
            "call to Process().",
        )
        assert stream.nothing_more()


def test_stream_whose_session_cannot_open_ends_with_the_precondition_error(ov_server) -> None:
    with Stream(ov_server.url) as stream:
        stream.send("unknown_servable", [_fp32("in", X)], timestamp=1)
        error = stream.error()
        assert error.startswith("[StatusCode.UNKNOWN] Mediapipe graph precondition failed")
        assert "failed to load the model (no_such_model: " in error
        assert stream.nothing_more()
