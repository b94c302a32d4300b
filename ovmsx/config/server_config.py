"""The whole ``config.json``: read, parse and validate it in one step.

Also the subconfig a graph can bring (``load_subconfig``): a config file holding only the
models that graph uses.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, PrivateAttr, ValidationError, field_validator

from ovmsx.config.errors import ConfigError
from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.config.model_config import ModelConfig
from ovmsx.config.monitoring_config import MonitoringConfig
from ovmsx.config.pipeline_config import CustomNodeLibraryConfig, PipelineConfig
from ovmsx.config.strict_model import STRICT
from ovmsx.status import StatusCode, render

log = logging.getLogger("ovmsx.config")


class ModelEntry(BaseModel):
    """One item of ``model_config_list``: ``{"config": {...}}`` and nothing else."""

    model_config = STRICT

    config: ModelConfig
    """The model's settings."""


_Entry = TypeVar("_Entry")


def keep_first_of_each_name(
    entries: list[_Entry], name_of: Callable[[_Entry], str], kind: str
) -> list[_Entry]:
    """``entries`` without the later ones of a name taken already, each warned about (OVMS
    loads the first definition of a name)."""
    seen: set[str] = set()
    kept = []
    for entry in entries:
        name = name_of(entry)
        if name in seen:
            log.warning(
                "%s name %r is defined more than once in the config file; "
                "only the first definition is served",
                kind,
                name,
            )
            continue
        seen.add(name)
        kept.append(entry)
    return kept


class ServerConfig(BaseModel):
    """A validated ``config.json``; ``load_config`` builds one from a file."""

    model_config = STRICT

    model_config_list: list[ModelEntry]
    """The models to serve, first definition first; later ones with a taken name are dropped."""

    mediapipe_config_list: list[MediapipeConfig] = Field(default_factory=list)
    """The MediaPipe graphs to serve, first definition first; later ones with a taken name are
    dropped."""

    pipeline_config_list: list[PipelineConfig] = Field(default_factory=list)
    """DAG pipelines of models and custom nodes; later ones with a taken name are dropped."""
    custom_node_library_config_list: list[CustomNodeLibraryConfig] = Field(default_factory=list)
    """Custom-node libraries pipelines refer to by name."""

    # Custom loaders are not served: they are only checked to be a list of objects, kept raw.
    custom_loader_config_list: list[dict[str, Any]] = Field(default_factory=list)
    """Custom model loaders, raw."""
    monitoring: MonitoringConfig | None = None
    """The metrics settings (read once, when the server starts)."""

    _path: Path | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any) -> None:
        if isinstance(context, dict) and context.get("config_path") is not None:
            self._path = Path(context["config_path"])

    @field_validator("model_config_list")
    @classmethod
    def _first_model_of_each_name(cls, entries: list[ModelEntry]) -> list[ModelEntry]:
        return keep_first_of_each_name(entries, lambda entry: entry.config.name, "model")

    @field_validator("mediapipe_config_list")
    @classmethod
    def _first_graph_of_each_name(cls, graphs: list[MediapipeConfig]) -> list[MediapipeConfig]:
        return keep_first_of_each_name(graphs, lambda graph: graph.name, "graph")

    @property
    def models(self) -> tuple[ModelConfig, ...]:
        """The model configs, one per name, in file order."""
        return tuple(entry.config for entry in self.model_config_list)

    @field_validator("pipeline_config_list")
    @classmethod
    def _first_pipeline_of_each_name(cls, entries: list[PipelineConfig]) -> list[PipelineConfig]:
        return keep_first_of_each_name(entries, lambda entry: entry.name, "pipeline")

    @property
    def pipelines(self) -> tuple[PipelineConfig, ...]:
        """The pipeline configs, one per name, in file order."""
        return tuple(self.pipeline_config_list)

    @property
    def libraries(self) -> tuple[CustomNodeLibraryConfig, ...]:
        """The custom-node libraries, in file order."""
        return tuple(self.custom_node_library_config_list)

    @property
    def graphs(self) -> tuple[MediapipeConfig, ...]:
        """The graph configs, one per name, in file order."""
        return tuple(self.mediapipe_config_list)

    @property
    def path(self) -> Path | None:
        """The file this config was read from, if any."""
        return self._path

    @property
    def config_dir(self) -> Path:
        """The folder relative paths in this config resolve against."""
        return self._path.parent if self._path is not None else Path.cwd()


class Subconfig(BaseModel):
    """A graph's subconfig file: the models the graph uses, and nothing else."""

    model_config = STRICT

    model_config_list: list[ModelEntry]
    """The models, first definition first; later ones with a taken name are dropped."""

    @field_validator("model_config_list")
    @classmethod
    def _first_model_of_each_name(cls, entries: list[ModelEntry]) -> list[ModelEntry]:
        return keep_first_of_each_name(entries, lambda entry: entry.config.name, "model")


_Document = TypeVar("_Document", bound=BaseModel)


def _validate_text(text: str, path: str | Path, schema: type[_Document]) -> _Document:
    # Relative paths inside a file resolve against that file's folder.
    try:
        data = json.loads(text)
    except json.JSONDecodeError as bad:
        where = f"line {bad.lineno} column {bad.colno}"
        problem = f"{where}: {render(StatusCode.JSON_INVALID, bad.msg)}"
        raise ConfigError(path, "", problem, status=StatusCode.JSON_INVALID) from None
    absolute = Path(os.path.abspath(path))
    context = {"config_dir": absolute.parent, "config_path": absolute}
    try:
        return schema.model_validate(data, context=context)
    except ValidationError as bad:
        raise ConfigError.from_validation(path, bad, status=StatusCode.JSON_INVALID) from None


def _read_text(path: str | Path) -> str:
    try:
        raw = Path(path).read_bytes()
    except OSError as bad:
        raise ConfigError(path, "", f"cannot read the file: {bad.strerror or bad}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        problem = render(StatusCode.JSON_INVALID, f"not UTF-8 text at byte {bad.start}")
        raise ConfigError(path, "", problem, status=StatusCode.JSON_INVALID) from None


def parse_config(text: str, path: str | Path) -> ServerConfig:
    """Validate the text of a config file; ``path`` names it in errors and anchors relative paths.

    Raises ``ConfigError`` (status ``JSON_INVALID``) for bad JSON or a value the schema refuses.
    """
    return _validate_text(text, path, ServerConfig)


def load_config(path: str | Path) -> ServerConfig:
    """Read and validate a ``config.json``; any failure is a ``ConfigError`` naming the file."""
    return parse_config(_read_text(path), path)


def load_subconfig(path: str | Path) -> tuple[ModelConfig, ...]:
    """Read a graph's subconfig (``MediapipeConfig.subconfig_file``): its models, one per name.

    The file may hold only ``model_config_list``; relative ``base_path``s resolve against the
    subconfig's own folder. Any failure, a missing file included, is a ``ConfigError`` naming
    the file (status ``JSON_INVALID`` for syntax and schema, none for an unreadable file).
    """
    subconfig = _validate_text(_read_text(path), path, Subconfig)
    return tuple(entry.config for entry in subconfig.model_config_list)
