"""What the REST frontend is given to serve with, and the protocols other parts implement for it.

The REST server answers KServe v2 itself; three of its endpoints belong to other parts of
ovmsx, which it reaches only through these protocols:

- ``GET /metrics``: a ``MetricsEndpoint`` (None = metrics are off; OVMS then answers
  400 "Invalid request URL", as for an unknown path);
- ``GET /v1/config`` and ``POST /v1/config/reload``: a ``ConfigApi``;
- every servable call (infer, metadata, ready) is reported once, when its outcome is known,
  to the ``RequestObserver`` that gRPC reports to as well (metrics and per-request log lines).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ovmsx.frontend.kserve_service import KServeService
    from ovmsx.frontend.request_observer import RequestObserver
    from ovmsx.servables.registry import ServableRegistry


class MetricsEndpoint(Protocol):
    def exposition(self) -> tuple[bytes, str]:
        """The body and content type of ``GET /metrics``."""
        ...


class ConfigApi(Protocol):
    async def status(self) -> tuple[int, bytes]:
        """``GET /v1/config``: the HTTP status and the body."""
        ...

    async def reload(self) -> tuple[int, bytes]:
        """``POST /v1/config/reload``: the HTTP status and the body."""
        ...


@dataclass
class RestContext:
    registry: ServableRegistry
    service: KServeService
    """The gRPC service of the same process; REST shares its registry and its rules."""
    metrics: MetricsEndpoint | None = None
    config_api: ConfigApi | None = None
    observer: RequestObserver | None = None
