"""Errors as values with a code.

The table itself lives in C++ (``csrc/core/status.h``); this module turns it into the
``StatusCode`` enum and the ``StatusError`` exception that every layer raises and every
frontend renders. The rendered message is OVMS's: ``"<message> - <details>"``.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from ovmsx import _core


class StatusInfo(NamedTuple):
    message: str
    """The OVMS base message, e.g. ``"Invalid input shape"``."""
    grpc_code: int
    """Numeric ``grpc.StatusCode`` value a gRPC client receives."""
    http_status: int
    """HTTP status a REST client receives."""


_ROWS = _core.status_table()

StatusCode = enum.IntEnum("StatusCode", [(name, value) for name, value, *_ in _ROWS])
StatusCode.__doc__ = "Every failure ovmsx can report; values match the C++ enum."

_INFO: dict[StatusCode, StatusInfo] = {
    StatusCode(value): StatusInfo(message, grpc, http) for _, value, message, grpc, http in _ROWS
}

GRPC_INVALID_ARGUMENT = 3
GRPC_NOT_FOUND = 5


def status_info(code: StatusCode) -> StatusInfo:
    """The message and protocol codes of a status."""
    return _INFO[code]


def render(code: StatusCode, details: str = "") -> str:
    """The client-facing text: the OVMS message, then ``" - " + details`` if there are any."""
    return _core.render_status(StatusCode(code), details)


class StatusError(Exception):
    """A failure with its ``StatusCode``; ``str(err)`` is the full client-facing message."""

    def __init__(self, code: StatusCode | int, details: str = "") -> None:
        self.code = StatusCode(code)
        self.details = details
        super().__init__(render(self.code, details))

    @property
    def message(self) -> str:
        return str(self)

    @property
    def grpc_code(self) -> int:
        return _INFO[self.code].grpc_code

    @property
    def http_status(self) -> int:
        return _INFO[self.code].http_status


class InvalidArgumentError(StatusError, ValueError):
    """A status that blames the caller's input (gRPC INVALID_ARGUMENT): also a ``ValueError``."""


class NotFoundError(StatusError, LookupError):
    """A status naming something that does not exist (gRPC NOT_FOUND): also a ``LookupError``."""


def status_error(code: StatusCode | int, details: str = "") -> StatusError:
    """The exception for a status, of the subclass its gRPC code calls for."""
    grpc_code = _INFO[StatusCode(code)].grpc_code
    if grpc_code == GRPC_INVALID_ARGUMENT:
        return InvalidArgumentError(code, details)
    if grpc_code == GRPC_NOT_FOUND:
        return NotFoundError(code, details)
    return StatusError(code, details)
