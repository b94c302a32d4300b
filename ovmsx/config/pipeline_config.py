"""``pipeline_config_list`` and ``custom_node_library_config_list`` entries (OVMS's schema).

Only the shape of each entry is checked here; whether the nodes connect into a valid DAG is
checked when the pipeline loads, against the models and libraries it names
(ovmsx/servables/pipeline_definition.py).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, model_validator

from ovmsx.config.path_escape import refuse_escape
from ovmsx.config.strict_model import STRICT

log = logging.getLogger("ovmsx.config")

ENTRY_NODE = "request"
EXIT_NODE = "response"
DEMULTIPLY_LIMIT = 10000

Name = Annotated[str, Field(min_length=1)]
DemultiplyCount = Annotated[int, Field(ge=-1, le=DEMULTIPLY_LIMIT)]

# OVMS's words when it reads the old spelling of a dynamic count.
DEMULTIPLY_ZERO_WARNING = "demultiply_count 0 will be deprecated. For dynamic count use -1."


def _dynamic_if_zero(count: int | None, owner: str) -> int | None:
    """0 is the old spelling of -1 (dynamic): OVMS reads it so, with a warning."""
    if count != 0:
        return count
    log.warning("%s: %s", owner, DEMULTIPLY_ZERO_WARNING)
    return -1


class CustomNodeLibraryConfig(BaseModel):
    """A custom-node ``.so``: the name pipelines use for it and where it is."""

    model_config = STRICT

    name: Name
    """The name pipeline nodes give as ``library_name``."""
    base_path: Name
    """The library file, relative to the config file's folder or absolute."""

    _config_dir: Path = PrivateAttr(default_factory=Path.cwd)

    def model_post_init(self, context: Any) -> None:
        if isinstance(context, dict) and context.get("config_dir") is not None:
            self._config_dir = Path(context["config_dir"])

    @property
    def path(self) -> Path:
        """The library file, absolute. Raises ``StatusError(PATH_INVALID)`` when ``base_path``
        climbs with ``..`` (OVMS refuses it before opening anything)."""
        refuse_escape(self.base_path, f"custom node library {self.name}")
        return Path(os.path.normpath(self._config_dir / self.base_path))


class Source(BaseModel):
    """Where a node input (or a pipeline output) takes its data from."""

    model_config = STRICT

    node_name: Name
    """The upstream node, or ``request`` for a pipeline input."""
    data_item: Name
    """The upstream node's output alias, or the pipeline input's name."""


class NodeOutput(BaseModel):
    model_config = STRICT

    data_item: Name
    """The output's own name (model output or custom-node output)."""
    alias: Name
    """The name downstream nodes and the response use for it."""


class PipelineNode(BaseModel):
    model_config = STRICT

    name: Name
    type: Literal["DL model", "custom"]
    model_name: Name | None = None
    """For ``DL model`` nodes: the model to run."""
    version: Annotated[int, Field(ge=1)] | None = None
    """For ``DL model`` nodes: a fixed model version (default: the model's default)."""
    custom_library: Name | None = Field(default=None, alias="library_name")
    """For ``custom`` nodes: a ``custom_node_library_config_list`` name (key ``library_name``)."""
    params: dict[str, str] = Field(default_factory=dict)
    """For ``custom`` nodes: passed to the library's calls."""
    inputs: list[dict[str, Source]]
    """One single-key object per input: ``{"<input name>": {"node_name", "data_item"}}``."""
    outputs: list[NodeOutput]
    demultiply_count: DemultiplyCount | None = None
    """Split every output along its first dimension (-1: as many as it has)."""
    gather_from_node: Name | None = None
    """Stack the shards made by that demultiplexer back together before running."""

    @model_validator(mode="after")
    def _kind_fields(self) -> PipelineNode:
        if self.type == "DL model" and (self.model_name is None or self.custom_library):
            raise ValueError('a "DL model" node needs model_name and takes no library_name')
        if self.type == "custom" and (self.custom_library is None or self.model_name):
            raise ValueError('a "custom" node needs library_name and takes no model_name')
        for item in self.inputs:
            if len(item) != 1:
                raise ValueError("each item of inputs must have exactly one key")
        count = _dynamic_if_zero(self.demultiply_count, f"Pipeline node {self.name}")
        object.__setattr__(self, "demultiply_count", count)
        return self

    @property
    def input_sources(self) -> list[tuple[str, Source]]:
        return [next(iter(item.items())) for item in self.inputs]


class PipelineConfig(BaseModel):
    model_config = STRICT

    name: Name
    inputs: list[Name]
    """The names clients send."""
    outputs: list[dict[str, Source]]
    """One single-key object per output: ``{"<output name>": {"node_name", "data_item"}}``."""
    nodes: list[PipelineNode]
    demultiply_count: DemultiplyCount | None = None
    """Demultiplex the request's inputs at entry."""

    @model_validator(mode="after")
    def _single_keys(self) -> PipelineConfig:
        for item in self.outputs:
            if len(item) != 1:
                raise ValueError("each item of outputs must have exactly one key")
        count = _dynamic_if_zero(self.demultiply_count, f"Pipeline {self.name}")
        object.__setattr__(self, "demultiply_count", count)
        return self

    @property
    def output_sources(self) -> list[tuple[str, Source]]:
        return [next(iter(item.items())) for item in self.outputs]
