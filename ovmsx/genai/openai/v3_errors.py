"""The errors of the ``/v3`` endpoints: an HTTP status and OVMS's ``{"error": ...}`` text."""

from __future__ import annotations


class V3Error(Exception):
    def __init__(
        self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


# How long a client is told to wait before retrying a servable whose engine restarts (2-4 s).
RETRY_AFTER_S = 2


def unavailable(message: str, retry_after_s: int) -> V3Error:
    """503: the servable is coming back (its engine restarts); try again in ``retry_after_s``."""
    return V3Error(503, message, (("retry-after", str(retry_after_s)),))


def execution_error(node: str, reason: str, code: str = "INVALID_ARGUMENT") -> V3Error:
    """A request refused inside an LLM node, worded as OVMS's MediaPipe graph reports it (its
    tests pin this text); every code but FAILED_PRECONDITION is a 400 there."""
    return V3Error(
        412 if code == "FAILED_PRECONDITION" else 400,
        f"Mediapipe execution failed. MP status - {code}: CalculatorGraph::Run() failed: \n"
        f'Calculator::Process() for node "{node}" failed: {reason}',
    )


def invalid_json(detail: str) -> V3Error:
    """The body cannot be routed (OVMS's JSON_INVALID, HTTP 412)."""
    return V3Error(412, f"The file is not valid json - {detail}")


def engine_failure(node: str, reason: str) -> V3Error:
    """A request whose engine died or failed under it: a 503 (the engine is coming back), in
    the words of the node's other errors."""
    error = execution_error(node, reason, "INTERNAL")
    return unavailable(error.message, RETRY_AFTER_S)
