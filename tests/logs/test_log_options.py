"""``--log_path``, a bad ``--log_level``, and the lines of ``--grpc_workers`` processes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from log_lines import WARNING_FLAG, config, parse
from serving_process import ServerProcess, run_to_exit

LEVEL_MESSAGE = "log_level should be one of: TRACE, DEBUG, INFO, WARNING, ERROR"
EX_USAGE = 64


def test_log_path_gets_the_same_lines_as_stdout(tmp_path: Path) -> None:
    log_file = tmp_path / "ovmsx.log"
    log_file.write_text("")
    server = ServerProcess(
        ["--config_path", str(config(tmp_path)), "--log_path", str(log_file), *WARNING_FLAG],
        tmp_path,
    )
    try:
        server.wait_ready()
    finally:
        code = server.stop()
    assert code == 0, server.log()
    written = log_file.read_text()
    assert parse(written) == parse(server.log())
    # The warning about a flag, logged before the log file was known, is in the file too.
    assert f"{WARNING_FLAG[0]} is accepted for compatibility and ignored" in written


def test_log_path_is_appended_to(tmp_path: Path) -> None:
    log_file = tmp_path / "ovmsx.log"
    earlier = "[2020-01-01 00:00:00.000][1][serving][info][server.py:1] an earlier run\n"
    log_file.write_text(earlier)
    server = ServerProcess(
        ["--config_path", str(config(tmp_path)), "--log_path", str(log_file)], tmp_path
    )
    try:
        server.wait_ready()
    finally:
        assert server.stop() == 0, server.log()
    written = log_file.read_text()
    assert written.startswith(earlier)
    assert len(parse(written)) > 1


def test_a_log_path_that_cannot_be_opened_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "no_such_folder" / "ovmsx.log"
    code, output = run_to_exit(
        ["--config_path", str(config(tmp_path)), "--port", "9", "--log_path", str(missing)],
        tmp_path,
    )
    assert code == EX_USAGE, output
    assert f"--log_path {missing}: No such file or directory" in output


@pytest.mark.parametrize("level", ["VERBOSE", "info", "WARN", ""])
def test_an_unknown_log_level_exits_with_ovms_message(tmp_path: Path, level: str) -> None:
    code, output = run_to_exit(
        ["--config_path", str(config(tmp_path)), "--port", "9", "--log_level", level], tmp_path
    )
    assert code == EX_USAGE, output
    assert LEVEL_MESSAGE in output


def test_each_grpc_workers_line_says_which_process_wrote_it(tmp_path: Path) -> None:
    server = ServerProcess(
        ["--config_path", str(config(tmp_path)), "--grpc_workers", "2"], tmp_path
    )
    try:
        server.wait_ready()
    finally:
        assert server.stop() == 0, server.log()
    lines = parse(server.log())
    writer = re.compile(r"\[(supervisor|worker (\d) pid (\d+))\] ")
    writers = set()
    for line in lines:
        found = writer.match(line.message)
        assert found, line
        writers.add(found.group(1))
        if found.group(3) is not None and "OpenVINO Model Server" in line.message:
            # Logged by the worker's main thread, whose id is the worker's process id.
            assert line.thread == int(found.group(3)), line
    assert {w.split(" pid ")[0] for w in writers} == {"supervisor", "worker 0", "worker 1"}
