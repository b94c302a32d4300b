"""The error a Responses request field raises."""

from __future__ import annotations


class ResponsesRequestError(ValueError):
    """A request OVMS refuses: HTTP 400, with OVMS's message as ``str(error)``."""
