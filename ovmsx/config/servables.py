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
    entries: Sequence[ModelConfig] = ()
    """``model_config_list`` (or the single model of the command line) as written: each entry
    is in ``models`` or, when its folder holds a graph, in ``graphs`` (``graph_folders``)."""
    folder_graphs: Sequence[MediapipeConfig] = ()
    """The graphs of ``entries`` (those whose folder holds a graph), in entry order."""
    listed_graphs: Sequence[MediapipeConfig] = ()
    """``mediapipe_config_list`` as written."""
