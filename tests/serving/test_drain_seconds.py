"""How long a stop drains: 30 s, or OVMSX_DRAIN_SECONDS; a value that is not a number of
seconds is named in the log and the default kept."""

from __future__ import annotations

import logging

import pytest

from ovmsx import server


@pytest.mark.parametrize(("value", "seconds"), [(None, 30.0), ("", 30.0), ("2.5", 2.5), ("0", 0.0)])
def test_the_drain_follows_the_variable(monkeypatch, value, seconds: float) -> None:
    if value is None:
        monkeypatch.delenv("OVMSX_DRAIN_SECONDS", raising=False)
    else:
        monkeypatch.setenv("OVMSX_DRAIN_SECONDS", value)
    assert server._drain_seconds() == seconds


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_drain_that_means_nothing_is_ignored_with_a_warning(monkeypatch, caplog, value) -> None:
    monkeypatch.setenv("OVMSX_DRAIN_SECONDS", value)
    with caplog.at_level(logging.WARNING, logger="ovmsx.server"):
        assert server._drain_seconds() == server.DRAIN_SECONDS
    assert f"OVMSX_DRAIN_SECONDS={value!r} is ignored" in caplog.text
