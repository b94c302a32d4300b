"""The ``ovmsx`` command refuses metrics settings it cannot honour, with OVMS's words and exit
codes: 64 for flag checks (printed to stderr, as ``ovms`` does), 1 for the rest (logged)."""

from __future__ import annotations

import json
from pathlib import Path

from serving_process import free_port, run_to_exit

EX_USAGE = 64
EX_FAILURE = 1


def _config(tmp_path: Path, monitoring: dict | None) -> Path:
    document: dict = {"model_config_list": []}
    if monitoring is not None:
        document["monitoring"] = monitoring
    path = tmp_path / "config.json"
    path.write_text(json.dumps(document))
    return path


def _ports() -> list[str]:
    return ["--port", str(free_port()), "--rest_port", str(free_port())]


def test_metrics_enable_without_rest_port(tmp_path: Path) -> None:
    config = _config(tmp_path, None)
    code, output = run_to_exit(
        ["--config_path", str(config), "--port", "9000", "--metrics_enable"], tmp_path
    )
    assert code == EX_USAGE
    assert "rest_port setting is missing, metrics are enabled on rest port" in output


def test_metrics_list_without_metrics_enable(tmp_path: Path) -> None:
    config = _config(tmp_path, None)
    args = ["--config_path", str(config), *_ports(), "--metrics_list", "ovms_streams"]
    code, output = run_to_exit(args, tmp_path)
    assert code == EX_USAGE
    assert "metrics_enable setting is missing, required when metrics_list is provided" in output


def test_unknown_family_on_the_command_line(tmp_path: Path) -> None:
    config = _config(tmp_path, None)
    args = ["--config_path", str(config), *_ports(), "--metrics_enable", "--metrics_list"]
    code, output = run_to_exit([*args, "ovms_streams,ovms_nope"], tmp_path)
    assert code == EX_FAILURE
    assert "[warning]" in _line(output, "Metrics family name not supported: ovms_nope")
    assert "[error]" in _line(output, "Invalid name in metrics_list")


def test_unknown_family_in_the_config(tmp_path: Path) -> None:
    monitoring = {"metrics": {"enable": True, "metrics_list": ["ovms_nope"]}}
    config = _config(tmp_path, monitoring)
    code, output = run_to_exit(["--config_path", str(config), *_ports()], tmp_path)
    assert code == EX_FAILURE
    assert "[error]" in _line(output, "Invalid name in metrics_list")


def test_monitoring_section_and_flag_together(tmp_path: Path) -> None:
    config = _config(tmp_path, {"metrics": {"enable": False}})
    args = ["--config_path", str(config), *_ports(), "--metrics_enable"]
    code, output = run_to_exit(args, tmp_path)
    assert code == EX_FAILURE
    line = _line(
        output, "Metrics configuration duplicated in configuration file and CLI parameters"
    )
    assert "[error]" in line


def test_config_enables_metrics_without_rest_port(tmp_path: Path) -> None:
    config = _config(tmp_path, {"metrics": {"enable": True}})
    code, output = run_to_exit(["--config_path", str(config), "--port", "9000"], tmp_path)
    assert code == EX_FAILURE
    message = "CLI parameter rest_port is not defined. It must be set to enable metrics on the REST"
    assert "[error]" in _line(output, message)


def test_monitoring_schema_error(tmp_path: Path) -> None:
    config = _config(tmp_path, {"metrics": {"enable": 1}})
    code, output = run_to_exit(["--config_path", str(config), *_ports()], tmp_path)
    assert code == EX_FAILURE
    assert "monitoring.metrics.enable" in _line(output, str(config))


def _line(output: str, text: str) -> str:
    """The one output line holding ``text`` (failing with the whole output otherwise)."""
    found = [line for line in output.splitlines() if text in line]
    assert len(found) == 1, f"{text!r} in {len(found)} lines of:\n{output}"
    return found[0]
