"""Which OVMS logger name and level name each Python logger and level gets."""

from __future__ import annotations

import logging

import pytest

from ovmsx.log_format import TRACE, ovms_logger, spdlog_level


@pytest.mark.parametrize(
    ("python", "ovms"),
    [
        ("ovmsx.models", "modelmanager"),
        ("ovmsx.config", "modelmanager"),
        ("ovmsx.servables.model_loader", "modelmanager"),
        ("ovmsx.pipeline", "dag_executor"),
        ("ovmsx.graph", "mediapipe"),
        ("ovmsx.graphs", "mediapipe"),
        ("ovmsx.graph.calculators", "mediapipe"),
        ("ovmsx.server", "serving"),
        ("ovmsx.frontend", "serving"),
        ("ovmsx.workers", "serving"),
        ("ovmsx", "serving"),
        ("ovmsx.modelsx", "serving"),  # a prefix of a name is not its parent
        ("root", "serving"),
        ("my_node", "my_node"),  # loggers outside ovmsx keep their names
        ("asyncio", "asyncio"),
    ],
)
def test_logger_names(python: str, ovms: str) -> None:
    assert ovms_logger(python) == ovms


@pytest.mark.parametrize(
    ("level", "name"),
    [
        (TRACE, "trace"),
        (logging.DEBUG, "debug"),
        (logging.INFO, "info"),
        (logging.WARNING, "warning"),
        (logging.ERROR, "error"),
        (logging.CRITICAL, "critical"),
        (logging.INFO + 5, "info"),  # between two levels: the lower one's name
        (1, "trace"),
    ],
)
def test_level_names_are_spdlog_s(level: int, name: str) -> None:
    assert spdlog_level(level) == name
