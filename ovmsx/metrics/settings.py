"""Whether metrics are on and which families, from the flags and ``config.json``, by OVMS's rules.

The two sources exclude each other (``src/modelmanager.cpp``, ``src/metrics/metric_config.cpp``):

- no ``monitoring`` section: ``--metrics_enable`` and ``--metrics_list`` decide (their own checks,
  ``rest_port`` given and ``--metrics_enable`` with a list, are ``ServerOptions``'s);
- a ``monitoring`` section: it decides, and ``--metrics_enable`` beside it is an error;
- ``monitoring.metrics.enable: true`` needs ``--rest_port``;
- a list enables only the families it names: an unknown name is an error, an absent list means
  OVMS's 13 default families, and an empty JSON list means none.

Settings are read once, when the server starts: a config reload does not change them (OVMS
skips the section then, and logs ``skipped_on_reload``'s line).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ovmsx.config.monitoring_config import MonitoringConfig
from ovmsx.metrics.families import DEFAULT_FAMILIES, KNOWN_FAMILIES

log = logging.getLogger("ovmsx.config")

DUPLICATED = "Metrics configuration duplicated in configuration file and CLI parameters"
REST_PORT_MISSING = (
    "CLI parameter rest_port is not defined. It must be set to enable metrics on the REST interface"
)
INVALID_FAMILY = "Invalid name in metrics_list"


class MetricsFlags(Protocol):
    """The command line's metrics flags (``ServerOptions`` has them)."""

    metrics_enable: bool
    metrics_list: Sequence[str]
    rest_port: int


class MetricsConfigError(Exception):
    """Metrics settings the server cannot start with; the message is OVMS's, for the caller to
    log as an error before it exits."""


@dataclass(frozen=True)
class MetricsSettings:
    families: frozenset[str]
    """The enabled families (possibly none: an empty ``metrics_list`` in the config)."""


def metrics_settings(
    options: MetricsFlags, monitoring: MonitoringConfig | None
) -> MetricsSettings | None:
    """The metrics settings of a server start, ``None`` when metrics are off; raises
    ``MetricsConfigError`` with OVMS's message when they cannot be honoured."""
    if monitoring is not None and options.metrics_enable:
        raise MetricsConfigError(DUPLICATED)
    if monitoring is None:
        enabled = options.metrics_enable
        listed: Sequence[str] | None = options.metrics_list or None
    else:
        section = monitoring.metrics
        enabled = section is not None and section.enable
        if enabled and options.rest_port == 0:
            raise MetricsConfigError(REST_PORT_MISSING)
        listed = None if section is None else section.metrics_list
    families = DEFAULT_FAMILIES if listed is None else _listed_families(listed)
    if not enabled:
        return None
    logging.getLogger("ovmsx.models").info("Metrics enabled.")
    log.debug("Enabled metrics list: %s", ", ".join(sorted(families)))
    return MetricsSettings(frozenset(families))


def _listed_families(names: Sequence[str]) -> frozenset[str]:
    for name in names:
        if name not in KNOWN_FAMILIES:
            log.warning("Metrics family name not supported: %s", name)
            raise MetricsConfigError(f"{INVALID_FAMILY}: {name!r}")
    return frozenset(names)


def skipped_on_reload() -> None:
    """What a config reload logs instead of reading the ``monitoring`` section again."""
    log.debug("Reading metric from config json file skipped. Settings already loaded.")
