"""Everything one server run serves, as read from the config file (or the command line)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.config.model_config import ModelConfig
from ovmsx.config.pipeline_config import CustomNodeLibraryConfig, PipelineConfig


@dataclass(frozen=True)
class Servables:
    models: Sequence[ModelConfig] = ()
    graphs: Sequence[MediapipeConfig] = ()
    pipelines: Sequence[PipelineConfig] = ()
    libraries: Sequence[CustomNodeLibraryConfig] = ()
