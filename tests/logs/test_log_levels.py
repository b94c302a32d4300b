"""ovmsx's log at each ``--log_level``: OVMS's line format, and only the lines the level allows."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from log_lines import SHOWN, WARNING_FLAG, Line, config, parse
from serving_process import ServerProcess

STARTUP = (
    "OpenVINO Model Server ",
    "OpenVINO backend ",
    "Available devices for Open VINO: ",
    "Binding gRPC server to address: 127.0.0.1:",
    "Started gRPC server on port ",
)


def serve_and_stop(root: Path, *args: str) -> tuple[ServerProcess, list[Line]]:
    """Start, wait until ready, ask gRPC health once, stop; the server and its log lines."""
    server = ServerProcess(["--config_path", str(config(root)), *WARNING_FLAG, *args], root)
    try:
        server.wait_ready()
        with grpc.insecure_channel(server.url) as channel:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=10
            )
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        code = server.stop()
    assert code == 0, server.log()
    return server, parse(server.log())


def having(lines: list[Line], text: str) -> list[Line]:
    return [line for line in lines if text in line.message]


@pytest.mark.parametrize("level", list(SHOWN))
def test_every_line_has_ovms_format_and_an_allowed_level(tmp_path: Path, level: str) -> None:
    server, lines = serve_and_stop(tmp_path, "--log_level", level)
    assert lines
    assert {line.level for line in lines} <= SHOWN[level]
    for line in lines:
        datetime.strptime(line.time, "%Y-%m-%d %H:%M:%S.%f")  # a real date and time
    # The model that cannot load is an error at every level, from OVMS's model manager.
    (error,) = having(lines, "model broken")
    assert (error.level, error.logger) == ("error", "modelmanager")
    # The flag ovmsx cannot honour is a warning naming it, unless the level hides warnings.
    warned = having(lines, f"{WARNING_FLAG[0]} is accepted for compatibility and ignored")
    assert [w.level for w in warned] == (["warning"] if "warning" in SHOWN[level] else [])
    assert bool(having(lines, "gRPC methods: ")) == ("debug" in SHOWN[level])
    assert bool(having(lines, "health Check of ''")) == ("trace" in SHOWN[level])
    assert server.process.returncode == 0


@pytest.mark.parametrize("level", ["TRACE", "INFO"])
def test_startup_lines_name_the_server_its_backend_devices_and_address(
    tmp_path: Path, level: str
) -> None:
    server, lines = serve_and_stop(tmp_path, "--log_level", level)
    found = [next(line for line in lines if line.message.startswith(s)) for s in STARTUP]
    assert [lines.index(line) for line in found] == sorted(lines.index(line) for line in found)
    assert all(line.level == "info" for line in found)
    version, _, devices, binding, started = found
    assert version.logger == "serving"
    assert "CPU" in devices.message
    assert devices.logger == "modelmanager"
    assert binding.message.endswith(f":{server.port}")
    assert started.message == f"Started gRPC server on port {server.port}"
    # %t is the OS thread id: the main thread's is the process id.
    assert version.thread == server.process.pid
    assert (started.file, started.logger) == ("server.py", "serving")


def test_info_hides_debug_and_trace_lines(tmp_path: Path) -> None:
    _, lines = serve_and_stop(tmp_path)  # INFO is the default
    assert not [line for line in lines if line.level in ("debug", "trace")]
    assert [line for line in having(lines, "add_one") if line.level == "info"]
