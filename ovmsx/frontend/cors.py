"""CORS headers on every REST answer, as OVMS sends them (COMPAT_GENAI §11): browser chat
front-ends call the ``/v3`` endpoints from other origins.

``Access-Control-Allow-Origin``, ``-Methods`` and ``-Headers`` come from ``--allowed_origins``,
``--allowed_methods`` and ``--allowed_headers`` (each ``*`` by default);
``Access-Control-Allow-Credentials: true`` only with ``--allow_credentials``. A preflight
(``OPTIONS`` on any path) gets 200 with these headers and an empty body.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Cors:
    origins: str = "*"
    methods: str = "*"
    allowed_headers: str = "*"
    credentials: bool = False

    @functools.cached_property
    def headers(self) -> tuple[tuple[bytes, bytes], ...]:
        headers = [
            (b"access-control-allow-origin", self.origins.encode("latin-1")),
            (b"access-control-allow-methods", self.methods.encode("latin-1")),
            (b"access-control-allow-headers", self.allowed_headers.encode("latin-1")),
        ]
        if self.credentials:
            headers.append((b"access-control-allow-credentials", b"true"))
        return tuple(headers)

    def sender(self, send_response):
        """``send_response`` with these headers added to every answer."""
        return functools.partial(send_response, extra=self.headers)
