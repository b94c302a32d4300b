"""A served pipeline (``pipeline_config_list`` entry): its definition, state and load error.

Pipelines have one version, ``1``, as in OVMS. A pipeline that fails to load stays listed,
unavailable, with its reason; the rest of the config still serves.
"""

from __future__ import annotations

from dataclasses import dataclass

from ovmsx.config.pipeline_config import PipelineConfig
from ovmsx.pipeline.pipeline_definition import PipelineDefinition
from ovmsx.servables.model import parse_version
from ovmsx.servables.model_version import VersionState
from ovmsx.servables.request_validation import InputValidator
from ovmsx.status import StatusCode, StatusError, status_error

PIPELINE_VERSION = 1


@dataclass
class Pipeline:
    name: str
    config: PipelineConfig
    state: VersionState = VersionState.START
    error: StatusError | None = None
    definition: PipelineDefinition | None = None
    validator: InputValidator | None = None

    @property
    def available(self) -> bool:
        return self.state is VersionState.AVAILABLE

    def check_version(self, version: str) -> None:
        if parse_version(version) not in (0, PIPELINE_VERSION):
            raise status_error(
                StatusCode.MODEL_VERSION_MISSING, f"{self.name}: pipelines have version 1"
            )

    def serving(self) -> tuple[PipelineDefinition, InputValidator]:
        if self.available and self.definition is not None and self.validator is not None:
            return self.definition, self.validator
        if self.state in (VersionState.UNLOADING, VersionState.END):
            raise status_error(StatusCode.PIPELINE_DEFINITION_NOT_LOADED_ANYMORE, self.name)
        details = self.name if self.error is None else f"{self.name}: {self.error.message}"
        raise status_error(StatusCode.PIPELINE_DEFINITION_NOT_LOADED_YET, details)

    def start(self, definition: PipelineDefinition) -> None:
        self.definition = definition
        self.validator = InputValidator(list(definition.inputs.values()))
        self.state = VersionState.AVAILABLE

    def retire(self) -> None:
        self.state = VersionState.UNLOADING
        if self.definition is not None:
            self.definition.close()
        self.definition = None
        self.state = VersionState.END
