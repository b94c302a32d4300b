"""The installed package loads on its own: no environment variables, the pinned OpenVINO."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import openvino

import ovmsx
from ovmsx import _core


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}


def test_import_needs_no_environment(tmp_path: Path) -> None:
    # Run from an empty folder so nothing but the installed package can be imported.
    result = subprocess.run(
        [sys.executable, "-c", "from pyovms import Tensor; print(Tensor('x', b'ab').datatype)"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "UINT8"


def test_core_links_the_openvino_of_the_wheel() -> None:
    assert _core.openvino_version() == openvino.get_version()


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m ovmsx ARGS`` outside the source tree, in a clean environment."""
    return subprocess.run(
        [sys.executable, "-m", "ovmsx", *args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_cli_without_a_model_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(cwd=tmp_path)
    assert result.returncode == 64  # EX_USAGE, as the ovms binary
    assert "config_path" in result.stderr


def test_cli_prints_versions(tmp_path: Path) -> None:
    result = run_cli("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"ovmsx {ovmsx.__version__}" in result.stdout
    assert openvino.get_version() in result.stdout


def test_cli_without_any_port_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"model_config_list": []}')
    result = run_cli("--config_path", str(config), cwd=tmp_path)
    assert result.returncode == 64
    assert "port and rest_port cannot have the same values" in result.stderr
