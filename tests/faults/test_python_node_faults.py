"""A Python node that raises, returns something that is not a list of Tensors, or blocks.

Raising or garbage fails the request with OVMS's status (MEDIAPIPE_EXECUTION_ERROR: gRPC
INVALID_ARGUMENT, HTTP 400) and a message naming the node; the other graphs keep answering. A
node that blocks holds its request until the client's deadline ends it (DEADLINE_EXCEEDED);
the thread it holds is left to it and replaced, so later requests, to any graph, are answered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import fault_world as fw
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from rest_process import RestProcess, rest_served
from serving_process import wait_until
from tritonclient.utils import InferenceServerException

EXECUTION_FAILED = (
    "Mediapipe execution failed. MP status - INTERNAL: Calculator::Process() for node"
)
BLOCKED_REQUESTS = 4  # more than the threads that run graphs


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestProcess]:
    root = tmp_path_factory.mktemp("python_faults")
    with rest_served(["--config_path", str(fw.build(root))], root) as process:
        yield process


def url(server: RestProcess) -> str:
    return f"127.0.0.1:{server.port}"


def increment_answers(server: RestProcess) -> None:
    with grpcclient.InferenceServerClient(url(server)) as client:
        result = client.infer("increment", [fw.tensor("input", fw.X)], client_timeout=20)
    np.testing.assert_array_equal(result.as_numpy("output"), fw.X + 1)


@pytest.mark.parametrize("fault", list(fw.FAULT_MESSAGES))
def test_faulty_node_fails_its_request_over_grpc(server: RestProcess, fault: str) -> None:
    graph = f"node_{fault}"
    with (
        grpcclient.InferenceServerClient(url(server)) as client,
        pytest.raises(InferenceServerException) as raised,
    ):
        client.infer(graph, [fw.tensor("input", fw.X)], client_timeout=20)
    assert raised.value.status() == "StatusCode.INVALID_ARGUMENT"
    message = raised.value.message()
    assert message.startswith(f'{EXECUTION_FAILED} "{graph}_node" failed: '), message
    assert fw.FAULT_MESSAGES[fault] in message, message
    increment_answers(server)


@pytest.mark.parametrize("fault", list(fw.FAULT_MESSAGES))
def test_faulty_node_fails_its_request_over_rest(server: RestProcess, fault: str) -> None:
    graph = f"node_{fault}"
    document = {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32",
                            "data": fw.X.ravel().tolist()}]}  # fmt: skip
    reply = server.infer(graph, document)
    assert reply.status == 400, reply
    assert reply.error.startswith(f'{EXECUTION_FAILED} "{graph}_node" failed: '), reply.error
    assert fw.FAULT_MESSAGES[fault] in reply.error, reply.error
    assert json.loads(server.infer("increment", document).body)["outputs"][0]["data"] == (
        (fw.X + 1).ravel().tolist()
    )


def test_faulty_node_in_a_stream_ends_it_with_the_error(server: RestProcess) -> None:
    from graph_streams import Stream

    with Stream(url(server)) as stream:
        stream.send("node_raises", [fw.tensor("input", fw.X)])
        error = stream.error()
    assert "the node gave up" in error, error
    assert '"node_raises_node"' in error, error
    with Stream(url(server)) as stream:
        stream.send("increment", [fw.tensor("input", fw.X)])
        np.testing.assert_array_equal(stream.result().as_numpy("output"), fw.X + 1)


def test_blocked_node_ends_at_the_deadline_and_others_go_on(server: RestProcess) -> None:
    with grpcclient.InferenceServerClient(url(server)) as client:
        for _ in range(BLOCKED_REQUESTS):
            with pytest.raises(InferenceServerException) as raised:
                client.infer("node_blocks", [fw.tensor("input", fw.X)], client_timeout=0.5)
            assert raised.value.status() == "StatusCode.DEADLINE_EXCEEDED"
            # Every thread that ran graphs may be blocked by now: the next requests still run.
            increment_answers(server)
            result = client.infer("sleepy", [fw.tensor("input", fw.X)], client_timeout=20)
            np.testing.assert_array_equal(result.as_numpy("output"), fw.X + 1)
    log = server.log()
    assert "nodes node_blocks_node still running after its caller gave up" in log, log


def test_blocked_node_in_a_stream_ends_at_the_deadline(server: RestProcess) -> None:
    for _ in range(BLOCKED_REQUESTS):
        errors: list = []
        client = grpcclient.InferenceServerClient(url(server))
        client.start_stream(
            callback=lambda result, error, seen=errors: seen.append(error), stream_timeout=0.5
        )
        client.async_stream_infer("node_blocks", [fw.tensor("input", fw.X)])
        wait_until(lambda seen=errors: seen, "the stream's deadline to end it")
        client.stop_stream()
        client.close()
        assert errors[0] is not None, errors
        assert "Deadline" in str(errors[0]), errors
        increment_answers(server)
    assert "a graph stream of nodes node_blocks_node still running" in server.log()
