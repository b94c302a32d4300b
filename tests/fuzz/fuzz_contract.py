"""What every fuzz target promises: an input either succeeds or is refused with one of ovmsx's
own errors, carrying a message. Anything else escapes the target, and atheris reports it as a
crash (with the input saved), as it does for a signal, a timeout or memory past its limit.

INTERNAL_ERROR is ovmsx's own code, but the frontends give it only to failures no check
foresaw (``_bug`` in kserve_service.py and rest_app.py): for a fuzzer it is a finding too.
"""

from __future__ import annotations

from collections.abc import Callable

from ovmsx.config.errors import ConfigError
from ovmsx.status import StatusCode, StatusError

# The base message of INTERNAL_ERROR, for refusals that arrive as text (a gRPC abort).
INTERNAL_MESSAGE = "Internal server error"
_NO_CODE = -1


class Finding(AssertionError):
    """An input broke the contract in a way no exception type shows (empty message, an
    internal error, a wrong answer)."""


class Refused(Exception):
    """A gRPC call ended by ``context.abort``: the code and message a client would get."""

    def __init__(self, code: object, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def check_refusal(error: BaseException) -> None:
    """Raise ``Finding`` when an expected error type still breaks the contract."""
    if isinstance(error, StatusError):
        # With libFuzzer's value profile on, this comparison makes each status code a feature
        # of its own: the C++ core shows atheris no coverage, but its answers do.
        if error.code.value == _NO_CODE:
            raise Finding("a status without a code") from error
        if error.code is StatusCode.INTERNAL_ERROR:
            raise Finding(f"internal error: {error.message}") from error
        if not error.message.strip():
            raise Finding(f"{error.code.name} without a message") from error
    elif isinstance(error, Refused):
        if error.message.startswith(INTERNAL_MESSAGE):
            raise Finding(f"internal error: {error.message}") from error
        if not error.message.strip():
            raise Finding(f"aborted with {error.code} and no message") from error
    elif not str(error).strip():
        raise Finding(f"{type(error).__name__} without a message") from error


def guarded(
    run: Callable[[bytes], object],
    refusals: tuple[type[BaseException], ...] = (StatusError, ConfigError, Refused),
) -> Callable[[bytes], None]:
    """``run`` as a fuzz target: ovmsx's refusals (with a message) pass; anything else, and a
    refusal without a message, propagates to the fuzzer."""

    def one_input(data: bytes) -> None:
        try:
            run(data)
        except refusals as error:
            check_refusal(error)

    return one_input
