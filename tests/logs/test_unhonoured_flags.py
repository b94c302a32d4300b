"""Flags ovmsx accepts but cannot act on say so in a warning; flags of OVMS's other modes are
refused with a message that says what they are."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ovmsx.config.cli_options import PULL_ONLY_FLAGS, UNHONOURED_FLAGS, parse_options
from ovmsx.config.errors import UsageError

VALUES = {
    "grpc_max_threads": "8",
    "grpc_memory_quota": "1000000",
    "custom_node_resources_cleaner_interval_seconds": "60",
    "verbose_response": "true",
}


def _single_model(tmp_path: Path) -> list[str]:
    return ["--model_name", "m", "--model_path", str(tmp_path), "--port", "9000"]


@pytest.mark.parametrize("flag", sorted(UNHONOURED_FLAGS))
def test_an_unhonoured_flag_is_named_in_a_warning(
    tmp_path: Path, flag: str, caplog: pytest.LogCaptureFixture
) -> None:
    value = VALUES.get(flag, str(tmp_path))  # the others take a path
    with caplog.at_level(logging.WARNING, logger="ovmsx.config"):
        parse_options([*_single_model(tmp_path), f"--{flag}", value])
    (warning,) = caplog.records
    assert warning.levelno == logging.WARNING
    assert warning.getMessage().startswith(f"--{flag} is accepted for compatibility and ignored: ")


def test_flags_left_at_their_defaults_say_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    args = [*_single_model(tmp_path), "--custom_node_resources_cleaner_interval_seconds", "300"]
    with caplog.at_level(logging.WARNING, logger="ovmsx.config"):
        parse_options(args)
    assert not caplog.records


@pytest.mark.parametrize("flag", sorted(PULL_ONLY_FLAGS))
def test_a_pull_flag_without_a_pull_is_refused_by_name(tmp_path: Path, flag: str) -> None:
    # Other flags follow; the message is about the pull mode, not about them.
    with pytest.raises(UsageError) as refused:
        parse_options([f"--{flag}=x", "--max_num_seqs", "4", *_single_model(tmp_path)])
    assert str(refused.value).startswith(f"--{flag} belongs to the pull mode: ")
    assert refused.value.exit_code == 64
