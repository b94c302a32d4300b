"""Which ``model_config_list`` entries are graphs: the one place that decides.

OVMS serves an entry of ``model_config_list`` (and ``--model_name``/``--model_path``) whose
folder holds a ``graph.pbtxt`` as a MediaPipe graph of the entry's name, with that folder as the
graph's base path; an entry without one stays a model. The folder is looked at in this order:

1. ``graph_path`` set in the entry: a graph based at ``base_path``, its file ``graph_path``;
2. ``base_path/graph.pbtxt``: a graph based at ``base_path``;
3. ``base_path/1/graph.pbtxt``: a graph based at ``base_path/1``;
4. otherwise a model (version folders, or a single model file).

A graph's ``subconfig`` (or the ``subconfig.json`` beside its ``graph.pbtxt``) is read as for
``mediapipe_config_list``. Entries on cloud storage and entries whose ``base_path`` climbs
with ``..`` are models without looking (the model rules refuse them with PATH_INVALID).

Later kinds of folder served the same way (an LLM folder is a graph folder too) extend
``graph_base``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ovmsx.config.mediapipe_config import GRAPH_FILE, MediapipeConfig
from ovmsx.config.model_config import ModelConfig
from ovmsx.config.path_escape import escapes

FIRST_VERSION = "1"
"""The version folder a graph folder may keep its ``graph.pbtxt`` in."""


def graph_base(entry: ModelConfig) -> Path | None:
    """The base folder of the graph ``entry`` names, or ``None`` when it is a model
    (reads the file system: call off the event loop)."""
    folder = entry.local_path
    if folder is None or escapes(entry.base_path):
        return None
    if entry.graph_path:
        return folder
    for base in (folder, folder / FIRST_VERSION):
        try:
            if (base / GRAPH_FILE).is_file():
                return base
        except OSError:  # a name too long, a folder not readable: the model load says why
            return None
    return None


def as_graph(entry: ModelConfig, base: Path) -> MediapipeConfig:
    """The ``mediapipe_config_list`` item an entry based at ``base`` stands for."""
    item: dict[str, str] = {"name": entry.name, "base_path": str(base)}
    if entry.graph_path:
        item["graph_path"] = entry.graph_path
    if entry.subconfig:
        item["subconfig"] = entry.subconfig
    return MediapipeConfig.model_validate(item, context={"config_dir": entry.config_dir})


def split_graph_folders(
    entries: Sequence[ModelConfig],
) -> tuple[list[ModelConfig], list[MediapipeConfig]]:
    """``entries`` as the models and the graphs they are now, each list in entry order
    (blocking)."""
    models: list[ModelConfig] = []
    graphs: list[MediapipeConfig] = []
    for entry in entries:
        base = graph_base(entry)
        if base is None:
            models.append(entry)
        else:
            graphs.append(as_graph(entry, base))
    return models, graphs
