"""A request as the servables see it, whatever protocol brought it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ovmsx import _core


class RequestInput(Protocol):
    """One input of a request, before it is checked against the model.

    The frontend decides how the data is carried; the servable decides what it must be.
    """

    name: str
    datatype: str
    shape: tuple[int, ...]

    def to_tensor(self, model_datatype: str, element_count: int) -> _core.Tensor:
        """The data as a Tensor of this input's shape and datatype, or ``StatusError``
        (INVALID_CONTENT_SIZE / INVALID_VALUE_COUNT) when it does not hold
        ``element_count`` elements of ``model_datatype``."""
        ...


@dataclass
class InferRequest:
    servable_name: str
    version: str  # as the client wrote it; "" = default
    inputs: Sequence[RequestInput]
    id: str = ""
    requested_outputs: Sequence[str] = ()
    parameters: dict[str, object] = field(default_factory=dict)
    message: bytes | None = None  # the request as received, for graphs taking it whole


@dataclass
class InferResult:
    servable_name: str
    version: int
    outputs: list[_core.Tensor]
