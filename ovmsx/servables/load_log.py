"""The log lines of servable loading and state changes, in OVMS's words.

Operators grep OVMS logs for these lines (``Loaded model``, ``STATUS CHANGE``, ``state changed
to``), so ovmsx writes them with the same text, on the same loggers (``ovmsx.models`` is OVMS's
``modelmanager``, ``ovmsx.graphs`` its ``mediapipe``). Beyond OVMS, every load line ends with
how long the load took.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ovmsx import _core
from ovmsx.config.model_config import ModelConfig
from ovmsx.servables.port_layout import batch_index

log = logging.getLogger("ovmsx.models")
graph_log = logging.getLogger("ovmsx.graphs")

# The kinds of definitions OVMS names in its state lines, and the events it names there.
PIPELINE = "Pipeline"
MEDIAPIPE = "Mediapipe"
VALIDATION_PASSED = "ValidationPassedEvent"
VALIDATION_FAILED = "ValidationFailedEvent"
RELOAD = "ReloadEvent"
RETIRE = "RetireEvent"
USED_MODEL_CHANGED = "UsedModelChangedEvent"


def loading_model(config: ModelConfig, version: int, path: Path) -> None:
    log.info(
        "Loading model: %s, version: %d, from path: %s, with target device: %s ...",
        config.name,
        version,
        path,
        config.target_device,
    )


def loaded_model(
    name: str, version: int, inputs: list[_core.PortInfo], nireq: int, seconds: float
) -> None:
    log.info(
        "Loaded model %s; version: %d; batch size: %s; No of InferRequests: %d; load time: %s",
        name,
        version,
        batch_size(inputs),
        nireq,
        duration(seconds),
    )


def model_failed(name: str, version: int, message: str, seconds: float) -> None:
    log.error(
        "Error occurred while loading model: %s; version: %d; error: %s; load time: %s",
        name,
        version,
        message,
        duration(seconds),
    )


def status_change(name: str, version: int, state: str, error_code: str) -> None:
    log.info(
        'STATUS CHANGE: Version %d of model %s status change. New status: ( "state": "%s", '
        '"error_code": "%s" )',
        version,
        name,
        state,
        error_code,
    )


def definition_state(kind: str, name: str, state: str, event: str, details: str = "") -> None:
    """``Pipeline: p state changed to: AVAILABLE after handling: ValidationPassedEvent: ...``;
    failures are ERROR lines, the rest INFO."""
    logger = graph_log if kind == MEDIAPIPE else log
    level = logging.ERROR if event == VALIDATION_FAILED else logging.INFO
    line = "%s: %s state changed to: %s after handling: %s: %s"
    logger.log(level, line, kind, name, state, event, details)


def default_version(name: str, old: int | None, new: int | None) -> None:
    if old is not None:
        log.info("Updating default version for model: %s, from: %d", name, old)
    if new is None:
        log.info("Model: %s will not have default version since no version is available.", name)
    else:
        log.info("Updated default version for model: %s, to: %d", name, new)


def duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.1f} ms"


def batch_size(inputs: list[_core.PortInfo]) -> str:
    """The model's batch dimension as OVMS prints it: ``1``, ``-1`` (any), ``1:8``, or ``none``
    when its first input has no batch axis."""
    if not inputs:
        return "none"
    port = inputs[0]
    index = batch_index(port)
    if index is None or port.rank_dynamic or index >= len(port.dims):
        return "none"
    low, high = port.dims[index]
    if low == high:
        return str(low)
    if high < 0:
        return "-1"
    return f"{low}:{high}"
