"""CORS headers on every REST answer, as OVMS sends them (COMPAT_GENAI §11): browser chat
front-ends call the ``/v3`` endpoints from other origins.

``Access-Control-Allow-Origin``, ``-Methods`` and ``-Headers`` come from ``--allowed_origins``,
``--allowed_methods`` and ``--allowed_headers`` (each ``*`` by default);
``Access-Control-Allow-Credentials: true`` only with ``--allow_credentials``. The wildcard
``*`` does not cover ``Authorization`` (the Fetch standard names it apart), so it is listed
beside it: a browser front-end can then send an ``--api_key_file`` key. A preflight
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
            (b"access-control-allow-headers", _with_authorization(self.allowed_headers)),
        ]
        if self.credentials:
            headers.append((b"access-control-allow-credentials", b"true"))
        return tuple(headers)

    def sender(self, send_response):
        """``send_response`` with these headers added to every answer."""
        return functools.partial(send_response, extra=self.headers)


def _with_authorization(allowed: str) -> bytes:
    if allowed.strip() == "*":
        allowed = "*, Authorization"
    return allowed.encode("latin-1")
