"""What the ``ovmsx`` command says to someone trying it the first time: a missing port names
both port flags, and ``--cpu_extension`` gets one message (ignored), never a file check too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import serving_models as sm
from serving_process import ServerProcess, write_config

EX_USAGE = 64
OVMSX = Path(sys.executable).with_name("ovmsx")  # the console script pip installed


def _ovmsx(args: list[str], workdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(OVMSX), *args], cwd=workdir, capture_output=True, text=True, timeout=60, check=False
    )


def _empty_config(root: Path) -> Path:
    return write_config(root / "config.json", [])


def test_no_port_at_all_names_both_port_flags(tmp_path: Path) -> None:
    done = _ovmsx(["--config_path", str(_empty_config(tmp_path))], tmp_path)
    assert done.returncode == EX_USAGE
    assert done.stderr == (
        "ovmsx: port and rest_port cannot have the same values: neither --port (gRPC) nor "
        "--rest_port (REST) is set; give one of them, or both\n"
    )


def test_the_same_port_twice_keeps_the_plain_message(tmp_path: Path) -> None:
    config = str(_empty_config(tmp_path))
    done = _ovmsx(["--config_path", config, "--port", "9123", "--rest_port", "9123"], tmp_path)
    assert done.returncode == EX_USAGE
    assert done.stderr == "ovmsx: port and rest_port cannot have the same values\n"


def test_a_missing_cpu_extension_is_ignored_with_one_warning(tmp_path: Path) -> None:
    sm.save(sm.add_constant([1, 10], 1, "add_one"), tmp_path / "add_one")
    config = write_config(
        tmp_path / "config.json", [{"name": "add_one", "base_path": str(tmp_path / "add_one")}]
    )
    server = ServerProcess(
        ["--config_path", str(config), "--cpu_extension", "/nope/missing.so"], tmp_path
    )
    try:
        server.wait_ready()
    finally:
        code = server.stop()
    log = server.log()
    assert code == 0, log
    warning = (
        "--cpu_extension is accepted for compatibility and ignored: ovmsx does not load "
        "OpenVINO CPU extension libraries"
    )
    assert log.count(warning) == 1
    assert "--cpu_extension" not in log.replace(warning, "")


def test_help_lists_the_pull_and_config_flags_whatever_else_is_given() -> None:
    for argv in (["--help"], ["--pull", "--help"], ["--list_models", "-h"]):
        done = subprocess.run(
            [str(OVMSX), *argv], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        for flag in ("--config_path", "--source_model", "--pull", "--add_to_config"):
            assert flag in done.stdout, (argv, flag)
        assert "--engine_max_rss" in done.stdout


def test_engine_limits_that_mean_nothing_are_refused(tmp_path: Path) -> None:
    config = str(_empty_config(tmp_path))
    for flags, message in (
        (["--engine_max_requests", "0"], "--engine_max_requests: must be at least 1"),
        (["--engine_max_rss", "lots"], "--engine_max_rss"),
    ):
        done = _ovmsx(["--config_path", config, "--port", "9123", *flags], tmp_path)
        assert done.returncode != 0, flags
        assert message in done.stderr, done.stderr
