"""One entry of ``mediapipe_config_list``: a MediaPipe graph to serve and where its files are."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, PrivateAttr

from ovmsx.config.model_config import REMOTE_PREFIXES
from ovmsx.config.strict_model import STRICT
from ovmsx.status import StatusCode, status_error

GRAPH_FILE = "graph.pbtxt"
"""The graph file looked for in the graph's folder when ``graph_path`` is absent."""
SUBCONFIG_FILE = "subconfig.json"
"""The subconfig looked for in the graph's folder when ``subconfig`` is absent."""
FOLDER_CONFIG_FILE = "config.json"
"""Read instead of a missing ``subconfig.json`` when it holds only ``model_config_list``."""


class MediapipeConfig(BaseModel):
    """One ``mediapipe_config_list`` item (COMPAT.md §4.8).

    Validate with ``MediapipeConfig.model_validate(data, context={"config_dir": folder})`` so
    that relative paths resolve against the config file's folder (default: the current
    directory at validation time). ``base_dir``, ``graph_file`` and ``subconfig_file`` give the
    resolved paths.

    Cloud URLs (``gs://``, ``s3://``, ``az://``…) are accepted and kept as written, like a
    model's ``base_path``, but ovmsx does not read graphs from cloud storage: the path
    properties raise ``StatusError(PATH_INVALID)`` for them, so a graph loader reports the
    graph as not loadable and the rest of the config still serves. Check ``is_remote`` first
    to avoid the exception. A ``..`` in any of the three paths is followed, as OVMS follows it
    (it joins the paths as strings and opens the result): ``graph_path: "../shared.pbtxt"``
    reads the file beside the graph's folder.
    """

    model_config = STRICT

    name: Annotated[str, Field(min_length=1)]
    """The name clients use to address the graph."""

    base_path: str | None = None
    """The graph's folder, relative to the config file's folder. Absent or ``""``: the folder
    named like the graph, next to the config file. Python handler paths start here too."""

    graph_path: str | None = None
    """The ``.pbtxt`` file, relative to ``base_path``. Absent: ``graph.pbtxt`` there."""

    subconfig: str | None = None
    """A config file with the models the graph uses (only ``model_config_list``), relative to
    ``base_path``. Absent: ``subconfig.json`` there, if that file exists, else ``config.json``
    there if it is a subconfig (holds ``model_config_list`` and nothing else)."""

    calculator_modules: list[str] | None = None
    """Beyond OVMS: modules with calculators written in Python that the graph uses, each a
    ``.py`` file (relative to ``base_path``) or an importable module name. Their
    ``@register_calculator`` classes become calculator names the graph may use."""

    _config_dir: Path = PrivateAttr(default_factory=Path.cwd)
    _graph_text: str | None = PrivateAttr(default=None)

    @classmethod
    def in_memory(cls, name: str, base_dir: Path, text: str) -> MediapipeConfig:
        """A graph built by the server rather than read from a file (``--task``), based at
        ``base_dir``."""
        config = cls.model_validate({"name": name, "base_path": str(base_dir)})
        config._graph_text = text
        return config

    @property
    def graph_text(self) -> str | None:
        """The graph's text when it was built in memory; None when it is read from its file."""
        return self._graph_text

    def model_post_init(self, context: Any) -> None:
        if isinstance(context, dict) and context.get("config_dir") is not None:
            self._config_dir = Path(context["config_dir"])

    @property
    def config_dir(self) -> Path:
        """The folder a relative ``base_path`` resolves against."""
        return self._config_dir

    @property
    def is_remote(self) -> bool:
        """True when any of the graph's paths is a cloud storage URL."""
        return any(
            path is not None and path.startswith(REMOTE_PREFIXES)
            for path in (self.base_path, self.graph_path, self.subconfig)
        )

    @property
    def base_dir(self) -> Path:
        """The graph's folder, absolute. Raises ``StatusError(PATH_INVALID)`` for a cloud URL."""
        return self._local(self.base_path or self.name, self._config_dir)

    @property
    def graph_file(self) -> Path:
        """The graph file, absolute; it may not exist (the loader reports that)."""
        return self._local(self.graph_path or GRAPH_FILE, self.base_dir)

    @property
    def subconfig_file(self) -> Path | None:
        """The subconfig to read, absolute, or ``None`` when there is none.

        An explicit ``subconfig`` is returned whether or not the file exists, so that loading
        it reports a missing file (``load_subconfig`` raises ``ConfigError``); the default
        ``subconfig.json`` is optional and only returned when it exists.
        """
        if self.subconfig:
            return self._local(self.subconfig, self.base_dir)
        default = self.base_dir / SUBCONFIG_FILE
        if default.is_file():
            return default
        # OVMS falls back to the folder's config.json (its "model mesh" subconfig path,
        # modelmanager.cpp). Model folders hold a config.json of another kind (Hugging Face's,
        # or the server's own config beside its graph), which is no subconfig: only a file
        # shaped as one is read.
        fallback = self.base_dir / FOLDER_CONFIG_FILE
        return fallback if _shaped_as_subconfig(fallback) else None

    def _local(self, path: str, anchor: Path) -> Path:
        # OVMS joins with string concatenation; an absolute path replaces the anchor.
        if path.startswith(REMOTE_PREFIXES):
            problem = f"graph {self.name}: {path}: cloud storage is not supported"
            raise status_error(StatusCode.PATH_INVALID, problem)
        return Path(os.path.normpath(anchor / path))


def _shaped_as_subconfig(path: Path) -> bool:
    """Whether ``path`` is a JSON object whose only key is ``model_config_list``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and set(data) == {"model_config_list"}
