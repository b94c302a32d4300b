"""When a grown LLM engine is replaced by a fresh one (``--engine_max_rss``,
``--engine_max_requests``).

An openvino-genai pipeline keeps a little memory from every generation (about 11 KB, in-process
too) and never returns it. An operator may bound it: once an engine's resident memory passes the
bound, or it has taken so many generations, the server starts a new engine beside it, sends new
requests there, and stops the old one when its last request ends (engine_client.py). No request
fails for it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

log = logging.getLogger("ovmsx.llm_calculator")

RSS_ENV = "OVMSX_ENGINE_MAX_RSS"
REQUESTS_ENV = "OVMSX_ENGINE_MAX_REQUESTS"
_UNITS = {"": 1 << 20, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    """Bytes from ``4096`` (MiB), ``512M``, ``4G`` or ``300K``; ValueError otherwise."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (text[:-1], text[-1]) if text[-1:] in "KMG" else (text, "")
    value = float(number)
    if not value > 0:
        raise ValueError("must be greater than 0")
    return int(value * _UNITS[unit])


@dataclass(frozen=True)
class EngineLimits:
    max_rss_bytes: int | None = None
    max_requests: int | None = None

    @classmethod
    def from_environment(cls) -> EngineLimits:
        """The server's flags reach its engines' clients through the environment (the server
        sets it from ``--engine_max_rss`` / ``--engine_max_requests``)."""
        return cls(
            max_rss_bytes=_from_environment(RSS_ENV, parse_size),
            max_requests=_from_environment(REQUESTS_ENV, _positive_int),
        )

    def export(self) -> None:
        """Set the environment ``from_environment`` reads (flags given only)."""
        if self.max_rss_bytes is not None:
            os.environ[RSS_ENV] = f"{-(-self.max_rss_bytes // 1024)}K"
        if self.max_requests is not None:
            os.environ[REQUESTS_ENV] = str(self.max_requests)

    def exceeded(self, rss_bytes: int, requests: int) -> str | None:
        """Why an engine of this resident size that took this many requests is replaced."""
        if self.max_rss_bytes is not None and rss_bytes > self.max_rss_bytes:
            return f"its memory ({rss_bytes >> 20} MiB) passed --engine_max_rss"
        if self.max_requests is not None and requests >= self.max_requests:
            return f"it took {requests} requests (--engine_max_requests)"
        return None


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError("must be at least 1")
    return value


def _from_environment(name: str, parse):
    """The variable's value, or None when unset; a value that does not parse is named in the
    log and ignored (the server's own flags are checked before they are set here)."""
    text = os.environ.get(name)
    if not text:
        return None
    try:
        return parse(text)
    except (ValueError, IndexError) as error:
        log.warning("%s=%r is ignored: %s", name, text, error)
        return None
