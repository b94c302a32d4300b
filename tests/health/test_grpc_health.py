"""grpc.health.v1.Health on a real server, asked with grpcio-health-checking's own stub."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import tritonclient.grpc as grpcclient
from grpc_health.v1 import health_pb2, health_pb2_grpc
from health_servers import gated_config, servables_config, wait_live
from serving_process import ServerProcess, served

Status = health_pb2.HealthCheckResponse
SERVING = Status.SERVING
NOT_SERVING = Status.NOT_SERVING
SERVICE_UNKNOWN = Status.SERVICE_UNKNOWN
# A watch that has nothing new to say stays silent: the next message is awaited this long
# before the test gives up (only a failing test waits it out).
WATCH_TIMEOUT = 60.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("health")
    with served(servables_config(root), root) as process:
        yield process


@pytest.fixture
def health(server: ServerProcess) -> Iterator[health_pb2_grpc.HealthStub]:
    with grpc.insecure_channel(server.url) as channel:
        yield health_pb2_grpc.HealthStub(channel)


def check(stub: health_pb2_grpc.HealthStub, service: str) -> int:
    return stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status


@pytest.mark.parametrize(
    "service",
    [
        "",
        "inference.GRPCInferenceService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
    ],
)
def test_the_whole_server_is_serving_once_loaded(
    health: health_pb2_grpc.HealthStub, service: str
) -> None:
    assert check(health, service) == SERVING


@pytest.mark.parametrize("servable", ["add_one", "add_two", "echo"])
def test_a_model_pipeline_or_graph_that_answers_is_serving(
    health: health_pb2_grpc.HealthStub, servable: str
) -> None:
    assert check(health, servable) == SERVING


def test_a_model_with_no_version_loaded_is_not_serving(
    health: health_pb2_grpc.HealthStub, server: ServerProcess
) -> None:
    assert check(health, "broken") == NOT_SERVING
    # The KServe view of the same server agrees: the whole server is ready all the same.
    with grpcclient.InferenceServerClient(server.url) as client:
        assert client.is_server_ready()
    assert check(health, "") == SERVING


def test_check_of_an_unknown_name_is_not_found(health: health_pb2_grpc.HealthStub) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        check(health, "no_such_model")
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert "no_such_model" in raised.value.details()


def test_watch_of_an_unknown_name_says_service_unknown(
    health: health_pb2_grpc.HealthStub,
) -> None:
    watch = health.Watch(health_pb2.HealthCheckRequest(service="no_such_model"))
    try:
        assert next(watch).status == SERVICE_UNKNOWN
    finally:
        watch.cancel()


@pytest.mark.parametrize(("service", "status"), [("", SERVING), ("broken", NOT_SERVING)])
def test_watch_sends_the_current_status_first(
    health: health_pb2_grpc.HealthStub, service: str, status: int
) -> None:
    watch = health.Watch(health_pb2.HealthCheckRequest(service=service))
    try:
        assert next(watch).status == status
    finally:
        watch.cancel()


def test_a_malformed_check_request_is_invalid_argument(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.url) as channel:
        raw = channel.unary_unary("/grpc.health.v1.Health/Check")
        with pytest.raises(grpc.RpcError) as raised:
            raw(b"\x0a\xff", timeout=10)  # field 1 claims 255 bytes that never come
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "HealthCheckRequest" in raised.value.details()


def test_not_serving_while_loading_then_serving(tmp_path: Path) -> None:
    config, gate = gated_config(tmp_path)
    server = ServerProcess(["--config_path", str(config)], tmp_path)
    try:
        wait_live(server)
        with grpc.insecure_channel(server.url) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            assert check(stub, "") == NOT_SERVING
            assert check(stub, "gated") == NOT_SERVING
            watch = stub.Watch(health_pb2.HealthCheckRequest(service=""), timeout=WATCH_TIMEOUT)
            assert next(watch).status == NOT_SERVING
            gate.touch()
            assert next(watch).status == SERVING  # sent when the status changes
            watch.cancel()
            assert check(stub, "gated") == SERVING
            assert check(stub, "") == SERVING
    finally:
        gate.touch()
        code = server.stop()
    assert code == 0, server.log()


def test_stopping_tells_watchers_and_ends_their_watch(tmp_path: Path) -> None:
    config = servables_config(tmp_path)
    server = ServerProcess(["--config_path", str(config), "--log_level", "TRACE"], tmp_path)
    try:
        server.wait_ready()
        with grpc.insecure_channel(server.url) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            watches = {
                service: stub.Watch(
                    health_pb2.HealthCheckRequest(service=service), timeout=WATCH_TIMEOUT
                )
                for service in ("", "add_one")
            }
            for watch in watches.values():
                assert next(watch).status == SERVING
            server.process.send_signal(signal.SIGTERM)
            for service, watch in watches.items():
                got = [answer.status for answer in watch]
                ended = (watch.code(), watch.details())
                assert got == [NOT_SERVING], (service, got, ended, server.log())
                assert ended == (grpc.StatusCode.OK, ""), (service, ended)
    finally:
        code = server.stop()
    log = server.log()
    assert code == 0, log
    # The watches ended on their own: the drain did not have to cut them short.
    assert "cancelling calls still running" not in log, log
