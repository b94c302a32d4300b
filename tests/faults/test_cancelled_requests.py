"""A client that cancels, or whose deadline passes, while the server is still working on its
request: over unary gRPC (a model, a pipeline, a graph inferring the model, a graph whose
Python node sleeps), a stream, and REST (the client closes its connection). The work is
dropped or finishes unobserved, the server goes on answering, the metrics count nothing as
still running, and the memory of hundreds of cancelled 4 MiB requests comes back.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator

import fault_world as fw
import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from rest_process import CRASH_SIGNS, RestProcess, rest_served
from serving_process import rss_bytes, wait_until
from tritonclient.utils import InferenceServerException

DEADLINE_SECONDS = 0.03  # well inside every slow servable's work (fault_world.SLOW_LAYERS)
REPEATS = 2
CANCELLED_FOR_MEMORY = 200
WARM_UP = 8
# Generous: 200 requests of 4 MiB held on to would be 800 MiB.
RSS_GROWTH_LIMIT = 160 << 20


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestProcess]:
    root = tmp_path_factory.mktemp("cancelled")
    config = fw.build(root)
    args = ["--config_path", str(config), "--metrics_enable"]
    with rest_served(args, root, (*CRASH_SIGNS, "Traceback")) as process:
        yield process


def grpc_url(server: RestProcess) -> str:
    return f"127.0.0.1:{server.port}"


def answers(server: RestProcess, name: str) -> None:
    """The servable answers a request of its own right after the cancelled ones."""
    given, produced = fw.SLOW_SERVABLES[name]
    data = fw.rows(4, 3.0)
    with grpcclient.InferenceServerClient(grpc_url(server)) as client:
        result = client.infer(name, [fw.tensor(given, data)])
    expected = data + 1 if name == "sleepy" else data
    np.testing.assert_array_equal(result.as_numpy(produced), expected)


def nothing_running(server: RestProcess) -> None:
    """Every cancelled request has ended as far as the metrics can tell."""

    def idle() -> bool:
        text = server.request("GET", "/metrics").body.decode()
        return fw.metric(text, "ovms_current_requests") == 0 and (
            fw.metric(text, "ovms_current_graphs") == 0
        )

    wait_until(idle, "ovms_current_requests and ovms_current_graphs back to 0")


@pytest.mark.parametrize("name", list(fw.SLOW_SERVABLES))
def test_deadline_passes_mid_inference(server: RestProcess, name: str) -> None:
    given, _ = fw.SLOW_SERVABLES[name]
    with grpcclient.InferenceServerClient(grpc_url(server)) as client:
        for _ in range(REPEATS):
            with pytest.raises(InferenceServerException) as raised:
                client.infer(name, [fw.tensor(given, fw.rows())], client_timeout=DEADLINE_SECONDS)
            assert raised.value.status() == "StatusCode.DEADLINE_EXCEEDED"
    answers(server, name)
    nothing_running(server)


@pytest.mark.parametrize("name", list(fw.SLOW_SERVABLES))
def test_client_cancels_mid_inference(server: RestProcess, name: str) -> None:
    given, _ = fw.SLOW_SERVABLES[name]
    channel = grpc.insecure_channel(grpc_url(server))
    try:
        from tritonclient.grpc import service_pb2, service_pb2_grpc

        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        data = fw.rows()
        request = service_pb2.ModelInferRequest(model_name=name)
        request.inputs.add(name=given, datatype="FP32", shape=list(data.shape))
        request.raw_input_contents.append(data.tobytes())
        calls = [stub.ModelInfer.future(request) for _ in range(REPEATS)]
        for call in calls:
            with contextlib.suppress(grpc.FutureTimeoutError):
                call.result(timeout=DEADLINE_SECONDS)
            call.cancel()
        for call in calls:
            assert call.cancelled()
    finally:
        channel.close()
    answers(server, name)
    nothing_running(server)


def test_stream_cancelled_mid_inference(server: RestProcess) -> None:
    for _ in range(REPEATS):
        client = grpcclient.InferenceServerClient(grpc_url(server))
        client.start_stream(callback=lambda result, error: None)
        for _ in range(2):
            client.async_stream_infer("sleepy", [fw.tensor("input", fw.rows(4))])
        client.stop_stream(cancel_requests=True)
        client.close()
    answers(server, "sleepy")
    nothing_running(server)


def _rest_body(name: str, data: np.ndarray) -> bytes:
    given = fw.INPUT_NAMES[name]
    head = {
        "inputs": [
            {
                "name": given,
                "shape": list(data.shape),
                "datatype": "FP32",
                "parameters": {"binary_data_size": data.nbytes},
            }
        ]
    }
    return json.dumps(head).encode()


def rest_disconnect(
    server: RestProcess, name: str, data: np.ndarray, wait: float = DEADLINE_SECONDS
) -> None:
    """POST an infer request (binary extension), then close the connection unanswered."""
    head = _rest_body(name, data)
    request = (
        f"POST /v2/models/{name}/infer HTTP/1.1\r\nHost: x\r\n"
        f"Content-Type: application/octet-stream\r\n"
        f"Inference-Header-Content-Length: {len(head)}\r\n"
        f"Content-Length: {len(head) + data.nbytes}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.rest_port)) as connection:
        connection.sendall(request + head + data.tobytes())
        connection.settimeout(wait)
        with contextlib.suppress(TimeoutError):
            connection.recv(1)  # an answer this quick is fine too
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")


@pytest.mark.parametrize("name", list(fw.SLOW_SERVABLES))
def test_rest_client_disconnects_mid_inference(server: RestProcess, name: str) -> None:
    for _ in range(REPEATS):
        rest_disconnect(server, name, fw.rows())
    reply = server.request("GET", f"/v2/models/{name}/ready")
    assert reply.status == 200
    answers(server, name)
    nothing_running(server)


def test_cancelled_requests_leave_no_memory_behind(server: RestProcess) -> None:
    """200 requests of 4 MiB, all given up by their clients, over gRPC and REST."""
    data = fw.rows()
    url = grpc_url(server)
    with grpcclient.InferenceServerClient(url) as client:
        for _ in range(WARM_UP):
            client.infer("light", [fw.tensor("input", data)])
            rest_disconnect(server, "light", data)
        nothing_running(server)
        warm = rss_bytes(server.process.pid)
        for _ in range(CANCELLED_FOR_MEMORY // 2):
            with pytest.raises(InferenceServerException):
                client.infer("light", [fw.tensor("input", data)], client_timeout=0.005)
            rest_disconnect(server, "light", data, wait=0.005)
    nothing_running(server)
    answers(server, "slow")
    after = rss_bytes(server.process.pid)
    print(f"RSS warm {warm >> 20} MiB, after {CANCELLED_FOR_MEMORY} cancelled {after >> 20} MiB")
    assert after - warm < RSS_GROWTH_LIMIT, (warm >> 20, after >> 20)
