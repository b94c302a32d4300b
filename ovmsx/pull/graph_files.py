"""``graph.pbtxt`` for a pulled model, written beside it as OVMS does.

The text is the graph ovmsx builds in memory when serving a folder with ``--task``
(``ovmsx.genai.task_graph``: ``text_generation_graph``, ``encoder_graph``), from the same flags,
with one difference, OVMS's for a pulled model: the model is named relative to the graph's
own folder (``models_path: "./"``, or ``"./NAME.gguf"`` for a GGUF model), so that the folder
can be moved or mounted elsewhere and still be served.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import cast

from ovmsx.config.errors import UsageError
from ovmsx.genai.task_graph import (
    EMBEDDINGS,
    RERANK,
    TEXT_GENERATION,
    EncoderFlags,
    TaskError,
    TextGenerationFlags,
    encoder_graph,
    text_generation_graph,
)
from ovmsx.pull.errors import PullError
from ovmsx.pull.task_flags import TaskFlags

GRAPH_FILE = "graph.pbtxt"
RELATIVE_MODELS_PATH = "./"


def graph_text(
    task: str,
    flags: TaskFlags,
    *,
    models_path: str = RELATIVE_MODELS_PATH,
    target_device: str | None = None,
    plugin_config: str | None = None,
    cache_dir: Path | None = None,
) -> str:
    """The ``graph.pbtxt`` text for ``task``; ``UsageError`` for flags that cannot make one
    (a flag of another task, a bad ``--plugin_config``, a key given twice)."""
    flags.check_for(task)
    # The task_graph builders only format the path they are given: handed the text "./" they
    # write it as is, where a Path would drop the trailing slash OVMS writes.
    path = cast(Path, models_path)
    try:
        if task == TEXT_GENERATION:
            return text_generation_graph(
                path,
                flags.text_generation or TextGenerationFlags(),
                device=target_device,
                plugin_config=plugin_config,
                cache_dir=cache_dir,
            )
        if task in (EMBEDDINGS, RERANK):
            return encoder_graph(
                task,
                path,
                flags.encoder or EncoderFlags(),
                device=target_device,
                plugin_config=plugin_config,
            )
    except TaskError as error:
        raise UsageError(str(error)) from None
    raise UsageError(
        f"--task {task}: ovmsx does not write graphs for this task; it writes them for "
        f"{TEXT_GENERATION}, {EMBEDDINGS} and {RERANK}"
    )


def write_graph(folder: Path, text: str) -> Path:
    """``folder/graph.pbtxt`` replaced by ``text`` at once (a server polling the folder never
    reads half a file); ``PullError`` when the disk refuses."""
    path = folder / GRAPH_FILE
    try:
        handle, temporary = tempfile.mkstemp(prefix=".graph.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise PullError(f"cannot write {path}: {error.strerror or error}") from None
    return path
