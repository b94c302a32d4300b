"""The errors of the ``/v3`` endpoints: an HTTP status and OVMS's ``{"error": ...}`` text."""

from __future__ import annotations


class V3Error(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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
