"""MediaPipe's core calculators in graphs served by a real ovmsx server, over KServe gRPC
(tritonclient, unary and ModelStreamInfer) and REST (tritonclient.http).

The flow-limited graphs put a FlowLimiterCalculator before a Python node that holds each
frame until the test releases it (a file), so which frames pass and which are dropped follows
from the order of the test's steps alone.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from core_served_graphs import BROKEN_GRAPHS, GRAPHS
from graph_streams import Stream, output_names, timestamp_of
from serving_process import ServerProcess, wait_until
from tritonclient.utils import InferenceServerException

from ovmsx.call_timer import WARM_UP_CALLS


def grpc_input(name: str, *values: int) -> grpcclient.InferInput:
    data = np.array(values, np.int32)
    given = grpcclient.InferInput(name, list(data.shape), "INT32")
    given.set_data_from_numpy(data)
    return given


def rest_input(name: str, *values: int) -> httpclient.InferInput:
    data = np.array(values, np.int32)
    given = httpclient.InferInput(name, list(data.shape), "INT32")
    given.set_data_from_numpy(data)
    return given


@pytest.fixture(scope="module")
def rest(server: ServerProcess):
    with httpclient.InferenceServerClient(f"127.0.0.1:{server.rest_port}") as client:
        yield client


@pytest.fixture(scope="module", params=["grpc", "rest"])
def protocol(request, client, rest):
    """(client, input maker) for one protocol: every unary test runs on both."""
    return (client, grpc_input) if request.param == "grpc" else (rest, rest_input)


def test_every_core_graph_loads(client) -> None:
    for graph in GRAPHS:
        assert client.is_model_ready(graph), graph


@pytest.mark.parametrize(
    ("graph", "reason"),
    [
        ("split_without_outputs", "node split (SplitTensorVectorCalculator): The number of output "
         "streams should match the number of ranges specified in the CalculatorOptions."),
        ("limiter_without_finished", "node limiter (FlowLimiterCalculator): it needs the "
         '"FINISHED" input_stream'),
    ],
)  # fmt: skip
def test_a_graph_breaking_a_contract_is_not_served_and_says_why(protocol, graph, reason) -> None:
    assert graph in BROKEN_GRAPHS
    triton, given = protocol
    assert not triton.is_model_ready(graph)
    with pytest.raises(InferenceServerException) as refused:
        triton.infer(graph, [given("in", 1)])
    assert f"Mediapipe is not loaded yet - {graph}: " in str(refused.value)
    assert reason in str(refused.value)


def test_pass_through(protocol) -> None:
    triton, given = protocol
    answer = triton.infer("pass_through", [given("in", 1, 2, 3)])
    np.testing.assert_array_equal(answer.as_numpy("out"), [1, 2, 3])


def test_gate_lets_data_through_when_allowed(protocol) -> None:
    triton, given = protocol
    answer = triton.infer("gate", [given("data", 7), given("allow", 1)])
    np.testing.assert_array_equal(answer.as_numpy("out"), [7])


def test_a_closed_gate_leaves_a_unary_request_without_its_output(protocol) -> None:
    triton, given = protocol
    with pytest.raises(InferenceServerException, match="no packet on output stream out"):
        triton.infer("gate", [given("data", 7), given("allow", 0)])


def test_gate_reports_state_changes_on_a_stream(server) -> None:
    with Stream(server.url) as stream:
        for stamp, allow in ((1, 1), (2, 0), (3, 1)):
            inputs = [grpc_input("data", stamp * 10), grpc_input("allow", allow)]
            stream.send("gate_changes", inputs, stamp)
        answers = [stream.result() for _ in range(4)]
    seen = {(output_names(a)[0], timestamp_of(a)): a for a in answers}
    assert sorted(seen) == [("changed", 2), ("changed", 3), ("out", 1), ("out", 3)]
    np.testing.assert_array_equal(seen["out", 3].as_numpy("out"), [30])
    assert seen["changed", 2].as_numpy("changed").tolist() == [False]
    assert seen["changed", 3].as_numpy("changed").tolist() == [True]


def test_packet_cloner_in_a_unary_request(protocol) -> None:
    triton, given = protocol
    answer = triton.infer("cloner", [given("value", 5), given("tick", 0)])
    np.testing.assert_array_equal(answer.as_numpy("cloned"), [5])


def test_packet_cloner_repeats_the_latest_value_at_each_tick(server) -> None:
    with Stream(server.url) as stream:
        stream.send("cloner", [grpc_input("value", 5), grpc_input("tick", 0)], 1)
        stream.send("cloner", [grpc_input("tick", 0)], 2)
        stream.send("cloner", [grpc_input("value", 7), grpc_input("tick", 0)], 3)
        answers = [stream.result() for _ in range(3)]
    got = [(timestamp_of(a), a.as_numpy("cloned").tolist()) for a in answers]
    assert got == [(1, [5]), (2, [5]), (3, [7])]


def test_side_packet_at_each_tick(protocol) -> None:
    triton, given = protocol
    answer = triton.infer("side_packet_at_tick", [given("tick", 0)], parameters={"label": 42})
    np.testing.assert_array_equal(answer.as_numpy("out"), [42])


def test_side_packet_at_timestamp_zero(protocol) -> None:
    triton, given = protocol
    answer = triton.infer("side_packet_at_zero", [given("tick", 0)],
                          parameters={"label": 9, "OVMS_MP_TIMESTAMP": 500})  # fmt: skip
    np.testing.assert_array_equal(answer.as_numpy("out"), [9])
    if triton.__class__ is grpcclient.InferenceServerClient:
        # The packet's own timestamp, not the request's.
        assert answer.get_response().parameters["OVMS_MP_TIMESTAMP"].int64_param == 0


def test_previous_loopback_pairs_each_frame_with_the_previous_result(server) -> None:
    with Stream(server.url) as stream:
        for stamp, value in ((10, 1), (20, 2), (30, 3)):
            stream.send("previous", [grpc_input("frame", value)], stamp)
        answers = [stream.result() for _ in range(2)]
    got = [(timestamp_of(a), a.as_numpy("prev").tolist()) for a in answers]
    assert got == [(20, [2]), (30, [4])]


def test_the_first_frame_of_a_previous_loopback_has_no_previous_result(protocol) -> None:
    # A unary request is a graph instance of its own: its only frame is the first one.
    triton, given = protocol
    with pytest.raises(InferenceServerException, match="no packet on output stream prev"):
        triton.infer("previous", [given("frame", 1)])


def test_concatenate_loop_and_split(protocol) -> None:
    triton, given = protocol
    answer = triton.infer("vectors", [given("a", 1, 2), given("b", 3, 4, 5)])
    np.testing.assert_array_equal(answer.as_numpy("first"), [2, 4])
    np.testing.assert_array_equal(answer.as_numpy("second"), [6, 8, 10])


# -- flow limiting under load -----------------------------------------------------------------

# The slow node is placed by measurement (ovmsx.call_timer): it runs off the stream's (or the
# event loop's) thread while its calls are not proven quick, which takes WARM_UP_CALLS calls.
# Each flow graph's node is called at most 4 times in this module (flow_unary), so the limiter
# always sees the burst and concurrent requests never wait for each other.
assert WARM_UP_CALLS > 4


def release(graphs_root: Path, graph: str, *values: int) -> None:
    folder = graphs_root / graph / "release"
    folder.mkdir(exist_ok=True)
    for value in values:
        (folder / str(value)).touch()


def started(graphs_root: Path, graph: str) -> list[str]:
    folder = graphs_root / graph / "started"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_burst_keeps_the_newest_queued_frames_and_drops_the_rest(server, graphs_root) -> None:
    # max_in_flight 1, max_in_queue 2: 1 goes in; 2..6 queue, the oldest dropped to keep two.
    with Stream(server.url) as stream:
        for value in range(1, 7):
            stream.send("flow_queue", [grpc_input("in", value)], value)
        drops = [stream.result() for _ in range(3)]
        assert [(output_names(a), timestamp_of(a)) for a in drops] == [
            (["dropped"], 2),
            (["dropped"], 3),
            (["dropped"], 4),
        ]
        wait_until(lambda: started(graphs_root, "flow_queue"), "frame 1 reaches the slow node")
        assert started(graphs_root, "flow_queue") == ["1"]  # 5 and 6 wait in the limiter
        release(graphs_root, "flow_queue", 1, 5, 6)
        done = [stream.result() for _ in range(3)]
    got = [(output_names(a), timestamp_of(a), a.as_numpy("done").tolist()) for a in done]
    assert got == [(["done"], 1, [1]), (["done"], 5, [5]), (["done"], 6, [6])]


def test_with_no_queue_every_frame_arriving_while_one_is_in_flight_is_dropped(
    server, graphs_root
) -> None:
    with Stream(server.url) as stream:
        for value in (1, 2, 3):
            stream.send("flow_drop", [grpc_input("in", value)], value)
        drops = [stream.result() for _ in range(2)]
        assert [timestamp_of(a) for a in drops] == [2, 3]
        assert all(output_names(a) == ["dropped"] for a in drops)
        release(graphs_root, "flow_drop", 1, 4)
        first = stream.result()
        stream.send("flow_drop", [grpc_input("in", 4)], 4)  # nothing in flight: it goes
        second = stream.result()
    assert [(timestamp_of(a), a.as_numpy("done").tolist()) for a in (first, second)] == [
        (1, [1]), (4, [4])
    ]  # fmt: skip


def test_a_unary_request_through_a_flow_limiter(protocol, graphs_root) -> None:
    triton, given = protocol
    value = 7 if triton.__class__ is grpcclient.InferenceServerClient else 8
    release(graphs_root, "flow_unary", value)  # the slow node may finish it at once
    answer = triton.infer("flow_unary", [given("in", value)])
    np.testing.assert_array_equal(answer.as_numpy("done"), [value])


def test_concurrent_unary_requests_are_limited_each_on_its_own(server, graphs_root) -> None:
    # Each unary request is a graph instance of its own (as in OVMS): max_in_flight 1 limits
    # the frames of one request, so two requests hold a frame in the slow node at once.
    answers: dict[int, object] = {}

    def ask(value: int) -> None:
        with grpcclient.InferenceServerClient(server.url) as own:
            answers[value] = own.infer("flow_unary", [grpc_input("in", value)])

    threads = [threading.Thread(target=ask, args=(value,)) for value in (1, 2)]
    for thread in threads:
        thread.start()
    wait_until(lambda: {"1", "2"} <= set(started(graphs_root, "flow_unary")),
               "both requests reach the slow node", log=server.log)  # fmt: skip
    release(graphs_root, "flow_unary", 1, 2)
    for thread in threads:
        thread.join()
    assert {value: answer.as_numpy("done").tolist() for value, answer in answers.items()} == {
        1: [1], 2: [2]
    }  # fmt: skip
