"""Where the servables come from: the config file (with the graphs' subconfigs) or the
single-model flags; read at start and again for every reload.

The config file is identified by the MD5 of its bytes, as OVMS does: a reload happens when the
MD5 differs from the last one read, whether the edit changed the meaning or not.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ovmsx.config.cli_options import ServerOptions
from ovmsx.config.errors import ConfigError
from ovmsx.config.graph_folders import split_graph_folders
from ovmsx.config.mediapipe_config import GRAPH_FILE, MediapipeConfig
from ovmsx.config.model_config import REMOTE_PREFIXES, ModelConfig
from ovmsx.config.monitoring_config import MonitoringConfig
from ovmsx.config.pipeline_config import CustomNodeLibraryConfig, PipelineConfig
from ovmsx.config.servables import Servables
from ovmsx.config.server_config import (
    ServerConfig,
    keep_first_of_each_name,
    load_subconfig,
    parse_config,
)
from ovmsx.genai.task_graph import (
    EMBEDDINGS,
    RERANK,
    EncoderFlags,
    TaskError,
    TextGenerationFlags,
    check_task,
    detect_task,
    encoder_graph,
    text_generation_graph,
)
from ovmsx.status import StatusCode, StatusError

log = logging.getLogger("ovmsx.config")

# OVMS reads a config up to 3 times, 10 ms apart, before calling it broken: an editor or a
# copy may be halfway through writing it.
READ_ATTEMPTS = 3
READ_RETRY_SECONDS = 0.01


@dataclass(frozen=True)
class ConfigRead:
    """One reading of the config file: its MD5 (None when it could not be read), and either
    what it serves or why it cannot."""

    md5: str | None
    servables: Servables | None = None
    monitoring: MonitoringConfig | None = None
    error: ConfigError | None = None
    not_json: bool = False
    """The error is the JSON syntax itself (not the schema)."""

    def describe_failure(self) -> str:
        """OVMS's words for a config that cannot be loaded, then what is wrong."""
        error = self.error
        assert error is not None
        if self.not_json:
            return f"Configuration file is not a valid JSON file. Error: {error}"
        if error.status is StatusCode.JSON_INVALID:
            return f"Configuration file is not in valid configuration format: {error}"
        return f"Configuration file is invalid {error.path}: {error}"


def read_servables(options: ServerOptions) -> ConfigRead:
    """What to serve at start: the single-model flags, or the config file (raises
    ``ConfigError`` when the file cannot be served)."""
    single = options.single_model_config()
    if single is not None:
        graph = task_graph_config(options)
        if graph is not None:
            return ConfigRead(None, servables_from([], [graph]))
        # A --model_path folder holding graph.pbtxt is served as a graph (graph_folders).
        servables = servables_from([single])
        if single.preprocessing is not None and servables.folder_graphs:
            log.warning(
                "--mean, --scale, --color_format and --precision apply to a model; %s holds a "
                "graph, which is served without them",
                options.model_path,
            )
        return ConfigRead(None, servables)
    assert options.config_path is not None  # parse_options requires one of the two
    read = read_config(Path(options.config_path))
    if read.error is not None:
        raise read.error
    return read


def task_graph_config(options: ServerOptions) -> MediapipeConfig | None:
    """The graph OVMS builds in memory for ``--model_path``: with ``--task`` (or its flags),
    or for a folder with ``config.json`` and no ``graph.pbtxt`` whose task it can tell."""
    if options.model_path is None or options.model_path.startswith(REMOTE_PREFIXES):
        return None
    folder = Path(options.model_path)
    task = options.task
    if task is None and options.text_generation is None:
        if not (folder / "config.json").is_file() or (folder / GRAPH_FILE).is_file():
            return None
        task = detect_task(folder)
        if task is None:
            raise ConfigError(
                folder, "--task", "Could not infer model task - specify --task value explicitly"
            )
        log.info("model %s: %s holds a %s model, served as one", options.model_name, folder, task)
        try:
            check_task(task)
        except TaskError as error:
            raise ConfigError(folder, "--task", str(error)) from None
    if task in (EMBEDDINGS, RERANK):
        text = encoder_graph(
            task,
            folder.resolve(),
            options.encoder or EncoderFlags(),
            device=options.target_device,
            plugin_config=options.plugin_config,
        )
    else:
        text = text_generation_graph(
            folder,
            options.text_generation or TextGenerationFlags(),
            device=options.target_device,
            plugin_config=options.plugin_config,
            cache_dir=options.cache_dir,
        )
    assert options.model_name is not None
    return MediapipeConfig.in_memory(options.model_name, folder, text)


def file_md5(path: Path) -> str | None:
    """The MD5 of the file's bytes; None when it cannot be read (blocking: call off the loop)."""
    try:
        return hashlib.md5(path.read_bytes()).hexdigest()
    except OSError:
        return None


def read_config(path: Path) -> ConfigRead:
    """Read, parse and validate the config file and its graphs' subconfigs (blocking)."""
    for attempt in range(READ_ATTEMPTS):
        read = _read_once(path)
        if read.error is None or read.error.status is not StatusCode.JSON_INVALID:
            return read
        if attempt + 1 < READ_ATTEMPTS:
            time.sleep(READ_RETRY_SECONDS)
    return read


def _read_once(path: Path) -> ConfigRead:
    try:
        raw = path.read_bytes()
    except OSError as bad:
        problem = f"cannot read the file: {bad.strerror or bad}"
        return ConfigRead(None, error=ConfigError(path, "", problem))
    md5 = hashlib.md5(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        problem = f"not UTF-8 text at byte {bad.start}"
        error = ConfigError(path, "", problem, status=StatusCode.JSON_INVALID)
        return ConfigRead(md5, error=error, not_json=True)
    try:
        config = parse_config(text, path)
    except ConfigError as error:
        return ConfigRead(md5, error=error, not_json=not _is_json(text))
    return ConfigRead(md5, servables_of(config), config.monitoring)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def servables_of(config: ServerConfig) -> Servables:
    """What ``config`` serves now, its folders looked at (blocking)."""
    return servables_from(config.models, config.graphs, config.pipelines, config.libraries)


def servables_from(
    entries: Sequence[ModelConfig],
    listed_graphs: Sequence[MediapipeConfig] = (),
    pipelines: Sequence[PipelineConfig] = (),
    libraries: Sequence[CustomNodeLibraryConfig] = (),
) -> Servables:
    """What the model entries and listed graphs serve now (blocking): the entries whose folder
    holds a graph are graphs (``graph_folders``), then the graphs' subconfig models."""
    models, folder_graphs = split_graph_folders(entries)
    return _assembled(entries, models, folder_graphs, listed_graphs, pipelines, libraries)


def reexamine_folders(servables: Servables) -> Servables | None:
    """``servables`` again when a model entry's folder turned into a graph, or back, or its
    graph moved between ``base_path`` and ``base_path/1``; ``None`` when none did (blocking)."""
    models, folder_graphs = split_graph_folders(servables.entries)
    if folder_graphs == list(servables.folder_graphs):
        return None
    return _assembled(
        servables.entries,
        models,
        folder_graphs,
        servables.listed_graphs,
        servables.pipelines,
        servables.libraries,
    )


def _assembled(
    entries: Sequence[ModelConfig],
    models: list[ModelConfig],
    folder_graphs: list[MediapipeConfig],
    listed_graphs: Sequence[MediapipeConfig],
    pipelines: Sequence[PipelineConfig],
    libraries: Sequence[CustomNodeLibraryConfig],
) -> Servables:
    for graph in folder_graphs:
        log.info("model %s: %s holds a graph, served as one", graph.name, graph.graph_file)
    # model_config_list is read before mediapipe_config_list: its graph keeps a shared name.
    graphs = keep_first_of_each_name(
        [*folder_graphs, *listed_graphs], lambda graph: graph.name, "graph"
    )
    return Servables(
        models=[*models, *subconfig_models(graphs, models)],
        graphs=graphs,
        pipelines=pipelines,
        libraries=libraries,
        entries=entries,
        folder_graphs=folder_graphs,
        listed_graphs=listed_graphs,
    )


def subconfig_models(
    graphs: Sequence[MediapipeConfig], models: Sequence[ModelConfig]
) -> list[ModelConfig]:
    """Models from the graphs' subconfig files, served like any other (first name wins).

    A broken subconfig is logged and skipped: it costs its own models, not the server.
    """
    taken = {model.name for model in models}
    found = []
    for graph in graphs:
        try:
            path = None if graph.is_remote else graph.subconfig_file
        except StatusError:  # a cloud path: the graph reports it when it loads
            continue
        if path is None:
            continue
        try:
            subconfig = load_subconfig(path)
        except ConfigError as error:
            log.error("graph %s: %s", graph.name, error)
            continue
        for model in subconfig:
            if model.name not in taken:
                taken.add(model.name)
                found.append(model)
    return found
