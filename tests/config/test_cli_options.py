"""The ovms flags: values, OVMS's usage checks and messages, and the single-model config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ovmsx.config import EX_USAGE, Dim, LayoutSpec, UsageError, build_parser, parse_options
from ovmsx.config.cli_options import MODEL_FLAGS, REMOVED_FLAGS

SINGLE = ["--model_name", "m", "--model_path", "models/m", "--port", "9000"]
CONFIG = ["--config_path", "config.json", "--port", "9000"]


def usage_error(argv: list[str]) -> str:
    with pytest.raises(UsageError) as caught:
        parse_options(argv)
    assert caught.value.exit_code == EX_USAGE == 64
    return str(caught.value)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_defaults(in_tmp: Path) -> None:
    options = parse_options(CONFIG)
    assert options.config_path == in_tmp / "config.json"
    assert (options.port, options.rest_port) == (9000, 0)
    assert options.grpc_bind_address == "0.0.0.0"
    assert options.grpc_bind_addresses == ("0.0.0.0",)
    assert options.rest_bind_address == "0.0.0.0"
    assert options.grpc_workers == 1
    assert options.grpc_max_threads is None
    assert options.grpc_memory_quota is None
    assert options.grpc_channel_arguments == ()
    assert options.rest_workers is None
    assert (options.log_level, options.log_path) == ("INFO", None)
    assert options.file_system_poll_wait_seconds == 1
    assert options.custom_node_resources_cleaner_interval_seconds == 300
    assert options.cache_dir is None
    assert options.cpu_extension is None
    assert (options.metrics_enable, options.metrics_list) == (False, ())
    assert options.version is False
    assert options.single_model_config() is None


def test_every_server_flag(in_tmp: Path) -> None:
    (in_tmp / "ext.so").write_bytes(b"")
    options = parse_options(
        [
            *CONFIG,
            "--grpc_bind_address=127.0.0.1,::1,localhost",
            "--rest_port=8000",
            "--rest_bind_address",
            "127.0.0.1",
            "--grpc_workers",
            str(os.cpu_count()),
            "--grpc_max_threads",
            "16",
            "--grpc_memory_quota",
            "1048576",
            "--grpc_channel_arguments",
            "grpc.max_connection_age_ms=2000, grpc.primary_user_agent = ovmsx",
            "--rest_workers",
            "4",
            "--log_level",
            "DEBUG",
            "--log_path",
            "logs/ovms.log",
            "--file_system_poll_wait_seconds",
            "0",
            "--custom_node_resources_cleaner_interval_seconds",
            "5",
            "--cache_dir",
            "cache",
            "--metrics_enable",
            "--metrics_list",
            "ovms_requests_success, ovms_infer_req_queue_size",
            "--cpu_extension",
            "ext.so",
        ]
    )
    assert options.grpc_bind_addresses == ("127.0.0.1", "::1", "localhost")
    assert (options.rest_port, options.rest_bind_address) == (8000, "127.0.0.1")
    assert options.grpc_workers == os.cpu_count()
    assert (options.grpc_max_threads, options.grpc_memory_quota) == (16, 1048576)
    assert options.grpc_channel_arguments == (
        ("grpc.max_connection_age_ms", 2000),
        ("grpc.primary_user_agent", "ovmsx"),
    )
    assert options.rest_workers == 4
    assert (options.log_level, options.log_path) == ("DEBUG", in_tmp / "logs/ovms.log")
    assert options.file_system_poll_wait_seconds == 0
    assert options.custom_node_resources_cleaner_interval_seconds == 5
    assert options.cache_dir == in_tmp / "cache"
    assert options.metrics_enable is True
    assert options.metrics_list == ("ovms_requests_success", "ovms_infer_req_queue_size")
    assert options.cpu_extension == in_tmp / "ext.so"


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        (["--metrics_enable"], True),
        (["--metrics_enable", "true"], True),
        (["--metrics_enable=false"], False),
        (["--metrics_enable", "0"], False),
    ],
)
def test_metrics_enable_takes_an_optional_value(flag: list[str], expected: bool) -> None:
    options = parse_options([*CONFIG, "--rest_port", "8000", *flag])
    assert options.metrics_enable is expected


def test_single_model_flags_build_a_model_config(in_tmp: Path) -> None:
    options = parse_options(
        [
            *SINGLE,
            "--batch_size",
            "1:8",
            "--shape",
            '{"image": "(1,3,224,224)", "ids": "auto"}',
            "--layout",
            "nhwc:nchw",
            "--model_version_policy",
            '{"latest": {"num_versions": 2}}',
            "--nireq",
            "3",
            "--target_device",
            "GPU",
            "--plugin_config",
            '{"NUM_STREAMS": 2, "ENABLE_CPU_PINNING": false}',
        ]
    )
    assert options.model_path == str(in_tmp / "models/m")
    config = options.single_model_config()
    assert config is not None
    assert config.name == "m"
    assert config.local_path == in_tmp / "models/m"
    assert config.batch_size == Dim(1, 8)
    assert config.shape_for("image") == (Dim(1, 1), Dim(3, 3), Dim(224, 224), Dim(224, 224))
    assert config.shape_for("ids") == "auto"
    assert config.layout_for("image") == LayoutSpec("NHWC", "NCHW")
    assert config.model_version_policy.select([1, 2, 3]) == [2, 3]
    assert (config.nireq, config.target_device) == (3, "GPU")
    assert config.plugin_config_strings() == {"NUM_STREAMS": "2", "ENABLE_CPU_PINNING": "false"}


def test_single_model_defaults_and_plain_shape() -> None:
    config = parse_options([*SINGLE, "--shape", "(1,-1)"]).single_model_config()
    assert config is not None
    assert config.shape_for("anything") == (Dim(1, 1), Dim(-1, -1))
    assert (config.target_device, config.nireq) == ("CPU", 0)
    assert config.model_version_policy.kind == "latest"


def test_cloud_model_path_is_kept_as_given() -> None:
    argv = ["--model_name", "m", "--model_path", "gs://bucket/m", "--port", "9000"]
    config = parse_options(argv).single_model_config()
    assert config is not None
    assert config.base_path == "gs://bucket/m"
    assert config.is_remote


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--shape", "(1,0)"], "--shape: shape '(1,0)': dimension '0'"),
        (["--shape", '{"x": "(a)"}'], "--shape: x: shape '(a)'"),
        (["--shape", "{bad"], "--shape: not valid JSON"),
        (["--layout", "NQ"], "--layout: layout 'NQ': unexpected 'Q'"),
        (["--batch_size", "x"], "--batch_size: batch size dimension 'x'"),
        (["--model_version_policy", "latest"], "--model_version_policy: not valid JSON"),
        (
            ["--model_version_policy", '{"latest": {"num_versions": 0}}'],
            "--model_version_policy: latest.num_versions: Input should be greater than or equal",
        ),
        (["--plugin_config", '{"A": null}'], "--plugin_config: A: must be a string"),
        (["--plugin_config", "[1]"], "--plugin_config: must be an object"),
        (["--target_device", ""], "--target_device: String should have at least 1 character"),
    ],
)
def test_bad_single_model_values_name_the_flag(extra: list[str], message: str) -> None:
    assert usage_error([*SINGLE, *extra]).startswith(message)


def test_config_or_model_is_required() -> None:
    assert usage_error(["--port", "9000"]) == "Use config_path or model_path with model_name"
    assert usage_error(["--model_name", "m", "--port", "9000"]) == (
        "Use config_path or model_path with model_name"
    )


@pytest.mark.parametrize("flag", ["--model_name", "--model_path"])
def test_config_path_excludes_the_single_model(flag: str) -> None:
    message = usage_error([*CONFIG, flag, "x"])
    assert message == "Use either config_path or model_path with model_name"


@pytest.mark.parametrize("flag", MODEL_FLAGS)
def test_model_parameters_are_exclusive_with_the_config_file(flag: str) -> None:
    message = usage_error([*CONFIG, f"--{flag}", "1"])
    assert message == "Model parameters in CLI are exclusive with the config file"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--port", "65536"], "port number out of range from 0 to 65535"),
        (["--rest_port", "70000"], "rest_port number out of range from 0 to 65535"),
        (["--rest_port", "9000"], "port and rest_port cannot have the same values"),
        (["--port", "0"], "port and rest_port cannot have the same values: neither --port"),
        (["--grpc_workers", "0"], "grpc_workers count should be from 1 to CPU core count : "),
        (
            ["--grpc_workers", str((os.cpu_count() or 1) + 1)],
            f"grpc_workers count should be from 1 to CPU core count : {os.cpu_count()}",
        ),
        (["--rest_workers", "1", "--rest_port", "8000"], "rest_workers count should be from 2"),
        (
            ["--rest_workers", "10001", "--rest_port", "8000"],
            "rest_workers count should be from 2 to 10000",
        ),
        (["--rest_workers", "4"], "rest_workers is set but rest_port is not set"),
        (["--metrics_enable"], "rest_port setting is missing, metrics are enabled"),
        (["--metrics_list", "a", "--rest_port", "8000"], "metrics_enable setting is missing"),
        (["--grpc_bind_address", "300.1.1.1"], "grpc_bind_address has invalid format"),
        (["--grpc_bind_address", "a,,"], None),
        (["--grpc_bind_address", ","], "grpc_bind_address has invalid format"),
        (["--rest_bind_address", "bad host"], "rest_bind_address has invalid format"),
        (["--rest_bind_address=-x.com"], "rest_bind_address has invalid format"),
        (["--log_level", "debug"], "log_level should be one of: TRACE, DEBUG, INFO, WARNING"),
        (["--grpc_channel_arguments", "a=1,b"], "grpc_channel_arguments: expected key=value"),
        (["--grpc_channel_arguments", "a=b=c"], "grpc_channel_arguments: expected key=value"),
        (["--port", "-1"], "argument --port: expected a non-negative integer, got '-1'"),
        (["--nireq", "two"], "argument --nireq: expected a non-negative integer"),
        (["--metrics_enable", "maybe"], "argument --metrics_enable: expected true or false"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--conf", "x"], "unrecognized arguments: --conf x"),
    ],
)
def test_usage_checks(extra: list[str], message: str | None) -> None:
    argv = [*SINGLE, *extra]
    if message is None:  # empty items in the list are skipped, the rest is valid
        assert parse_options(argv).grpc_bind_addresses == ("a",)
        return
    assert usage_error(argv).startswith(message)


@pytest.mark.parametrize("flag", REMOVED_FLAGS)
def test_stateful_flags_were_removed(flag: str) -> None:
    assert "removed in OVMS 2026.3" in usage_error([*SINGLE, f"--{flag}"])
    assert "removed in OVMS 2026.3" in usage_error([*SINGLE, f"--{flag}", "true"])


def test_version_skips_the_usage_checks() -> None:
    options = parse_options(["--version"])
    assert options.version is True
    assert options.single_model_config() is None


def test_help_prints_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        parse_options(["--help"])
    assert caught.value.code == 0
    shown = capsys.readouterr().out
    for flag in ("--config_path", "--port", "--rest_port", "--model_name", "--plugin_config"):
        assert flag in shown
    assert "--stateful" not in shown


def test_build_parser_reads_the_raw_flags() -> None:
    args = build_parser().parse_args(["--port", "9", "--shape", "auto"])
    assert (args.port, args.shape, args.config_path) == (9, "auto", None)
