"""The ``monitoring`` section of ``config.json``, as OVMS's schema allows it.

``{"monitoring": {"metrics": {"enable": <bool>, "metrics_list": [<family>, ...]}}}``: ``metrics``
is the only key, ``enable`` is required and boolean, nothing else is allowed (OVMS's parser knows
an ``endpoint_path`` too, but its schema refuses it, and the route is always ``/metrics``).
Whether the listed names are metric families is checked when the server starts
(ovmsx/metrics/settings.py), as OVMS does.
"""

from __future__ import annotations

from pydantic import BaseModel

from ovmsx.config.strict_model import STRICT


class MetricsSection(BaseModel):
    """``monitoring.metrics``."""

    model_config = STRICT

    enable: bool
    """Serve ``/metrics`` on the REST port."""
    metrics_list: list[str] | None = None
    """The families to enable; absent = the default set, ``[]`` = none."""


class MonitoringConfig(BaseModel):
    """``monitoring``."""

    model_config = STRICT

    metrics: MetricsSection | None = None
    """The metrics settings; absent = metrics stay off."""
