"""One version of a model: its state (OVMS ModelVersionStatus) and, once available, its pool."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ovmsx.servables import load_log
from ovmsx.servables.model_loader import CompiledVersion
from ovmsx.status import StatusError


class VersionState(enum.IntEnum):
    """OVMS's version states, with its numbers (which mirror TensorFlow Serving's)."""

    START = 10
    LOADING = 20
    AVAILABLE = 30
    UNLOADING = 40
    END = 50


# OVMS's ModelVersionStatusErrorCode names (TensorFlow's error codes), as /v1/config shows them.
OK = "OK"
UNKNOWN = "UNKNOWN"  # a model version that failed to load
FAILED_PRECONDITION = "FAILED_PRECONDITION"  # a pipeline or graph that failed validation


@dataclass
class ModelVersion:
    """A version's state; ``error`` says why a load failed (state stays LOADING, as in OVMS).

    ``change`` moves it to another state and logs OVMS's ``STATUS CHANGE`` line; a version
    built to replace another (a reload) is ``quiet`` so that the log tells one story per
    version number.
    """

    model_name: str
    version: int
    state: VersionState = VersionState.START
    error: StatusError | None = None
    compiled: CompiledVersion | None = field(default=None, repr=False)

    @property
    def available(self) -> bool:
        return self.state is VersionState.AVAILABLE and self.compiled is not None

    @property
    def error_code(self) -> str:
        return UNKNOWN if self.error is not None else OK

    def change(self, state: VersionState, quiet: bool = False) -> None:
        self.state = state
        if not quiet:
            load_log.status_change(self.model_name, self.version, state.name, self.error_code)

    def status_line(self) -> str:
        reason = f" ({self.error.message})" if self.error else ""
        return f"model {self.model_name} version {self.version}: {self.state.name}{reason}"
