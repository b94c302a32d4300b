"""The REST server as a process: REST alone, flags, readiness while loading, metrics, and
several serving processes sharing the port."""

from __future__ import annotations

import json
import socket
import textwrap
from pathlib import Path

import pytest
import serving_models as sm
from rest_process import HOST, RestProcess, send
from serving_process import free_port, run_to_exit

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
ONES = {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32", "data": [1] * 10}]}

GATED_GRAPH = """
input_stream: "OVMS_PY_TENSOR:in"
output_stream: "OVMS_PY_TENSOR:out"
node {
  name: "gated"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT:in"
  output_stream: "OUTPUT:out"
  node_options: {
    [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: { handler_path: "gated.py" }
  }
}
"""

# The graph loads only once the file ``gate`` next to it exists: the test, not a clock,
# decides when loading ends.
GATED_HANDLER = """
import os
import time
from pyovms import Tensor

class OvmsPythonModel:
    def initialize(self, kwargs):
        gate = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate")
        deadline = time.monotonic() + 120
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.05)

    def execute(self, inputs):
        return [Tensor("out", inputs[0])]
"""


@pytest.fixture(scope="module")
def add_one_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("add_one")
    sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "add_one")
    model = {"name": "add_one", "base_path": str(root / "add_one"), "plugin_config": F32}
    path = root / "config.json"
    path.write_text(json.dumps({"model_config_list": [{"config": model}]}))
    return path


def _stopped(process: RestProcess) -> str:
    code = process.stop()
    assert code == 0, f"ovmsx exited with {code}:\n{process.log()}"
    return process.log()


def test_rest_alone(add_one_config: Path, tmp_path: Path) -> None:
    """No --port: OVMS serves REST alone, and so does ovmsx; --rest_workers is checked, then
    said to be unused."""
    args = ["--config_path", str(add_one_config), "--rest_workers", "4"]
    process = RestProcess(args, tmp_path, grpc=False)
    try:
        process.wait_ready()
        reply = process.infer("add_one", ONES)
        assert reply.status == 200, reply.body
        assert reply.json()["outputs"][0]["data"] == [2.0] * 10
    finally:
        log = _stopped(process)
    assert f"REST server listening on {HOST}:{process.rest_port}" in log
    assert "Started gRPC server" not in log
    assert "--rest_workers is accepted for compatibility and ignored" in log


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        ([], "port and rest_port cannot have the same values"),
        (["--port", "9123", "--rest_port", "9123"], "port and rest_port cannot have the same"),
        (["--rest_port", "70000"], "rest_port number out of range from 0 to 65535"),
        (["--port", "9124", "--rest_workers", "4"], "rest_workers is set but rest_port is not set"),
        (["--rest_port", "9125", "--rest_workers", "1"], "rest_workers count should be from 2"),
    ],
)
def test_port_flags_are_checked(
    add_one_config: Path, tmp_path: Path, ports: list[str], message: str
) -> None:
    code, output = run_to_exit(["--config_path", str(add_one_config), *ports], tmp_path)
    assert code == 64
    assert message in output


def test_a_rest_port_in_use_stops_the_server(add_one_config: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["--config_path", str(add_one_config), "--port", str(free_port())]
        args += ["--grpc_bind_address", HOST, "--rest_port", str(port)]
        code, output = run_to_exit([*args, "--rest_bind_address", HOST], tmp_path)
    assert code == 1
    assert f"Failed to start REST server on {HOST}:{port}" in output


def test_not_ready_while_loading(tmp_path: Path) -> None:
    graph = tmp_path / "gated"
    graph.mkdir()
    (graph / "graph.pbtxt").write_text(GATED_GRAPH)
    (graph / "gated.py").write_text(textwrap.dedent(GATED_HANDLER))
    config = tmp_path / "config.json"
    entry = {"name": "gated", "base_path": str(graph)}
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": [entry]}))
    process = RestProcess(["--config_path", str(config)], tmp_path, grpc=False)
    try:
        # Live as soon as it listens, not ready while the graph loads.
        live = process.wait_live()
        assert (live.status, live.json()) == (200, {"live": True})
        ready = process.request("GET", "/v2/health/ready")
        assert (ready.status, ready.error) == (503, "Server is not ready")
        model = process.request("GET", "/v2/models/gated/ready")
        assert model.status == 404
        assert model.error.startswith("Model with requested version is not loaded yet")
        (graph / "gate").touch()
        process.wait_ready()
        assert process.request("GET", "/v2/models/gated/ready").status == 200
    finally:
        (graph / "gate").touch()
        _stopped(process)


def test_metrics_on_the_rest_port(add_one_config: Path, tmp_path: Path) -> None:
    process = RestProcess(["--config_path", str(add_one_config), "--metrics_enable"], tmp_path)
    try:
        process.wait_ready()
        assert process.infer("add_one", ONES).status == 200
        metrics = process.request("GET", "/metrics?format=text")  # the query is ignored
        assert metrics.status == 200
        assert metrics.headers["content-type"].startswith("text/plain")
        assert b"# TYPE ovms_requests_success counter" in metrics.body
        refused = process.request("POST", "/metrics", b"")
        assert (refused.status, refused.error) == (406, "Unsupported method - POST /metrics")
    finally:
        _stopped(process)


def test_serving_processes_share_the_rest_port(add_one_config: Path, tmp_path: Path) -> None:
    args = ["--config_path", str(add_one_config), "--grpc_workers", "2"]
    process = RestProcess(args, tmp_path, grpc=False)
    try:
        process.wait_ready()
        for _ in range(20):  # each on a new connection, which either process may take
            reply = send(process.rest_port, "POST", "/v2/models/add_one/infer", json.dumps(ONES))
            assert reply.status == 200
    finally:
        log = _stopped(process)
    assert log.count(f"REST server listening on {HOST}:{process.rest_port}") == 2


def test_a_body_above_one_gibibyte_is_refused_before_it_is_read(
    add_one_config: Path, tmp_path: Path
) -> None:
    """As gRPC refuses a message above 1 GiB: a REST body declared larger is answered 413 at
    once (the client has sent only its head), the connection closes, and the server goes on."""
    process = RestProcess(["--config_path", str(add_one_config)], tmp_path)
    try:
        process.wait_ready()
        head = (
            f"POST /v2/models/add_one/infer HTTP/1.1\r\nHost: {HOST}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {(1 << 30) + 1}\r\n\r\n"
        )
        with socket.create_connection((HOST, process.rest_port), timeout=30) as client:
            client.sendall(head.encode() + b'{"inputs": [')
            answer = b""
            while chunk := client.recv(65536):  # the server closes after answering
                answer += chunk
        status_line, _, rest = answer.partition(b"\r\n")
        assert status_line == b"HTTP/1.1 413 Request Entity Too Large", answer
        assert b"connection: close" in rest.lower(), answer
        body = json.loads(rest.split(b"\r\n\r\n", 1)[1])
        assert body == {"error": f"Request body larger than {1 << 30} bytes"}
        reply = process.infer("add_one", ONES)
        assert reply.status == 200, reply.body
    finally:
        _stopped(process)
