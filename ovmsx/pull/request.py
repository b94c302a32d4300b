"""What a pull is asked to do, and what it did: plain data, importable without
huggingface_hub (the ``ovmsx`` command reads every command line with it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ovmsx.pull.repo_layout import model_folder
from ovmsx.pull.task_flags import TaskFlags


@dataclass(frozen=True)
class PullRequest:
    """What a pull command line asks for."""

    source_model: str
    """``--source_model``: ``ORG/NAME`` on the hub."""
    repository: Path
    """``--model_repository_path``: the model goes to ``repository / source_model``."""
    model_name: str | None = None
    """``--model_name``: what the model is served as (default: ``source_model``)."""
    task: str | None = None
    """``--task``; ``None``: told by the model's ``config.json`` once downloaded."""
    serve: bool = False
    """Start serving afterwards (no ``--pull``): the task must be one ovmsx serves."""
    gguf_filename: str | None = None
    overwrite_models: bool = False
    weight_format: str | None = None
    """``--weight-format`` as given (``None``: not given)."""
    extra_quantization_params: str | None = None
    target_device: str | None = None
    plugin_config: str | None = None
    cache_dir: Path | None = None
    flags: TaskFlags = field(default_factory=TaskFlags)

    @property
    def folder(self) -> Path:
        """Where the model goes, and the folder served."""
        return model_folder(self.repository, self.source_model)

    @property
    def served_name(self) -> str:
        return self.model_name or self.source_model


@dataclass(frozen=True)
class PullResult:
    """What a pull left on disk."""

    model_name: str
    folder: Path
    """The folder to serve (``--model_path``): the model and its ``graph.pbtxt``."""
    task: str
    graph: Path
    downloaded: bool
    """False when the folder was already there and nothing was fetched."""
