"""A served pipeline (``pipeline_config_list`` entry): its definition, state and load error.

Pipelines have one version, ``1``, as in OVMS. A pipeline that fails to load stays listed,
unavailable, with its reason; the rest of the config still serves.

A reload swaps the definition: requests that started on the old one finish on it
(``Served.in_flight`` counts them), new ones take the new one. ``start``, ``fail`` and
``retire`` hand back the definition they replace, for the caller to drain and close.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ovmsx.config.pipeline_config import PipelineConfig
from ovmsx.in_flight import InFlight
from ovmsx.pipeline.pipeline_definition import PipelineDefinition
from ovmsx.servables.model import parse_version
from ovmsx.servables.model_version import FAILED_PRECONDITION, OK, VersionState
from ovmsx.servables.request_validation import InputValidator
from ovmsx.status import StatusCode, StatusError, status_error

PIPELINE_VERSION = 1


@dataclass(frozen=True)
class Served:
    """One definition as requests use it, and the requests running on it."""

    definition: PipelineDefinition
    validator: InputValidator
    in_flight: InFlight = field(default_factory=InFlight, compare=False)

    async def close(self) -> None:
        """Wait for the requests running on it, then close its custom-node instances."""
        await self.in_flight.drained()
        self.definition.close()


@dataclass
class Pipeline:
    name: str
    config: PipelineConfig
    state: VersionState = VersionState.START
    error: StatusError | None = None
    # One attribute, so that a request on another thread (gRPC's polling thread) never sees
    # a new definition with the old validator.
    served: Served | None = field(default=None, repr=False)

    @property
    def available(self) -> bool:
        return self.state is VersionState.AVAILABLE

    @property
    def definition(self) -> PipelineDefinition | None:
        served = self.served
        return None if served is None else served.definition

    @property
    def error_code(self) -> str:
        """OVMS reports a definition that failed validation as FAILED_PRECONDITION."""
        return FAILED_PRECONDITION if self.error is not None else OK

    def check_version(self, version: str) -> None:
        if parse_version(version) not in (0, PIPELINE_VERSION):
            raise status_error(
                StatusCode.MODEL_VERSION_MISSING, f"{self.name}: pipelines have version 1"
            )

    def serving_run(self) -> Served:
        """The definition a request runs on now; OVMS's errors when there is none."""
        served = self.served
        if self.state is VersionState.AVAILABLE and served is not None:
            return served
        if self.state in (VersionState.UNLOADING, VersionState.END):
            raise status_error(StatusCode.PIPELINE_DEFINITION_NOT_LOADED_ANYMORE, self.name)
        details = self.name if self.error is None else f"{self.name}: {self.error.message}"
        raise status_error(StatusCode.PIPELINE_DEFINITION_NOT_LOADED_YET, details)

    def serving(self) -> tuple[PipelineDefinition, InputValidator]:
        served = self.serving_run()
        return served.definition, served.validator

    def start(self, definition: PipelineDefinition) -> Served | None:
        """Serve ``definition`` from now on; the one it replaces, if any."""
        old = self.served
        self.served = Served(definition, InputValidator(list(definition.inputs.values())))
        self.error = None
        self.state = VersionState.AVAILABLE
        return old

    def fail(self, error: StatusError) -> Served | None:
        """A (re)validation failed: unavailable with ``error``; the definition it served."""
        old, self.served = self.served, None
        self.error = error
        self.state = VersionState.LOADING
        return old

    def retire(self) -> Served | None:
        """Removed from the config: new requests get "Pipeline is retired"."""
        old, self.served = self.served, None
        self.error = None
        self.state = VersionState.END
        return old
