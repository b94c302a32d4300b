"""OVMS's rules for turning metrics on: the flags, the config's ``monitoring`` section, and the two
together (``metrics_settings`` on parsed options and a parsed config file)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from ovmsx.config import ConfigError, load_config, parse_options
from ovmsx.config.errors import UsageError
from ovmsx.metrics.families import DEFAULT_FAMILIES, LLM_FAMILIES, OPTIONAL_FAMILIES
from ovmsx.metrics.settings import (
    DUPLICATED,
    INVALID_FAMILY,
    REST_PORT_MISSING,
    MetricsConfigError,
    metrics_settings,
)

BASE = ["--model_name", "m", "--model_path", "/tmp/m", "--port", "9000"]


def _options(*flags: str):
    return parse_options([*BASE, *flags])


def _monitoring(tmp_path: Path, monitoring: object):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_config_list": [], "monitoring": monitoring}))
    return load_config(path).monitoring


def test_off_by_default() -> None:
    assert metrics_settings(_options(), None) is None


def test_enable_flag_turns_on_the_13_default_families_and_the_llm_ones() -> None:
    settings = metrics_settings(_options("--rest_port", "8000", "--metrics_enable"), None)
    assert settings is not None
    assert settings.families == DEFAULT_FAMILIES
    assert len(DEFAULT_FAMILIES - LLM_FAMILIES) == 13
    assert all(name.startswith("ovmsx_llm_") for name in LLM_FAMILIES)
    assert not settings.families & OPTIONAL_FAMILIES


def test_a_list_enables_only_what_it_names() -> None:
    options = _options(
        "--rest_port",
        "8000",
        "--metrics_enable",
        "--metrics_list",
        " ovms_infer_req_active , ovms_requests_success",
    )
    settings = metrics_settings(options, None)
    assert settings is not None
    assert settings.families == {"ovms_infer_req_active", "ovms_requests_success"}


def test_an_unknown_family_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    options = _options(
        "--rest_port", "8000", "--metrics_enable", "--metrics_list", "ovms_streams,ovms_bogus"
    )
    with caplog.at_level(logging.WARNING), pytest.raises(MetricsConfigError) as refused:
        metrics_settings(options, None)
    assert str(refused.value).startswith(INVALID_FAMILY)
    assert "ovms_bogus" in str(refused.value)
    assert "Metrics family name not supported: ovms_bogus" in caplog.messages


def test_the_documented_but_never_enabled_latency_family_is_refused() -> None:
    options = _options(
        "--rest_port",
        "8000",
        "--metrics_enable",
        "--metrics_list",
        "ovms_graph_request_latency_us",
    )
    with pytest.raises(MetricsConfigError, match=INVALID_FAMILY):
        metrics_settings(options, None)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--metrics_enable"], "rest_port setting is missing, metrics are enabled on rest port"),
        (
            ["--rest_port", "8000", "--metrics_list", "ovms_streams"],
            "metrics_enable setting is missing, required when metrics_list is provided",
        ),
    ],
)
def test_flag_checks(flags: list[str], message: str) -> None:
    with pytest.raises(UsageError) as refused:
        _options(*flags)
    assert str(refused.value) == message


def test_config_section_turns_metrics_on(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    monitoring = _monitoring(tmp_path, {"metrics": {"enable": True}})
    with caplog.at_level(logging.INFO):
        settings = metrics_settings(_options("--rest_port", "8000"), monitoring)
    assert settings is not None
    assert settings.families == DEFAULT_FAMILIES
    assert "Metrics enabled." in caplog.messages


def test_config_section_with_a_list(tmp_path: Path) -> None:
    monitoring = _monitoring(
        tmp_path, {"metrics": {"enable": True, "metrics_list": ["ovms_infer_req_queue_size"]}}
    )
    settings = metrics_settings(_options("--rest_port", "8000"), monitoring)
    assert settings is not None
    assert settings.families == {"ovms_infer_req_queue_size"}


def test_an_empty_config_list_enables_no_family(tmp_path: Path) -> None:
    monitoring = _monitoring(tmp_path, {"metrics": {"enable": True, "metrics_list": []}})
    settings = metrics_settings(_options("--rest_port", "8000"), monitoring)
    assert settings is not None
    assert settings.families == frozenset()


def test_config_section_disabled(tmp_path: Path) -> None:
    monitoring = _monitoring(tmp_path, {"metrics": {"enable": False}})
    assert metrics_settings(_options("--rest_port", "8000"), monitoring) is None


def test_config_list_is_checked_even_when_disabled(tmp_path: Path) -> None:
    monitoring = _monitoring(tmp_path, {"metrics": {"enable": False, "metrics_list": ["nope"]}})
    with pytest.raises(MetricsConfigError, match=INVALID_FAMILY):
        metrics_settings(_options("--rest_port", "8000"), monitoring)


def test_config_enable_needs_rest_port(tmp_path: Path) -> None:
    monitoring = _monitoring(tmp_path, {"metrics": {"enable": True}})
    with pytest.raises(MetricsConfigError) as refused:
        metrics_settings(_options(), monitoring)
    assert str(refused.value) == REST_PORT_MISSING


@pytest.mark.parametrize("section", [{"metrics": {"enable": True}}, {"metrics": {"enable": False}}])
def test_section_and_flag_together_are_refused(tmp_path: Path, section: dict) -> None:
    monitoring = _monitoring(tmp_path, section)
    with pytest.raises(MetricsConfigError) as refused:
        metrics_settings(_options("--rest_port", "8000", "--metrics_enable"), monitoring)
    assert str(refused.value) == DUPLICATED


@pytest.mark.parametrize(
    ("monitoring", "key"),
    [
        ({"metrics": {"enable": 1}}, "monitoring.metrics.enable"),
        ({"metrics": {"enable": "true"}}, "monitoring.metrics.enable"),
        ({"metrics": {}}, "monitoring.metrics.enable"),
        ({"metrics": {"enable": True, "endpoint_path": "/m"}}, "monitoring.metrics.endpoint_path"),
        ({"metrics": {"enabled": True}}, "monitoring.metrics.enable"),
        ({"metrics": {"enable": True}, "extra": {}}, "monitoring.extra"),
        ({"metrics": {"enable": True, "metrics_list": "ovms_streams"}}, "metrics_list"),
        ({"metrics": {"enable": True, "metrics_list": [1]}}, "metrics_list[0]"),
    ],
)
def test_schema_refuses(tmp_path: Path, monitoring: dict, key: str) -> None:
    """OVMS's schema: ``metrics`` only, ``enable`` required and boolean, a list of strings."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_config_list": [], "monitoring": monitoring}))
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert refused.value.status is not None
    assert refused.value.status.name == "JSON_INVALID"
    assert key in refused.value.key
