"""One pull: the model into ``<repository>/<source_model>``, then ``graph.pbtxt`` beside it.

The steps and messages are OVMS's (src/pull_module/hf_pull_model_module.cpp, libgit2.cpp,
gguf_downloader.cpp): an existing folder is kept unless ``--overwrite_models``; a folder whose
download was interrupted is completed; ``Model: ... downloaded to: ...`` and
``Graph: graph.pbtxt created in: ...`` report what was done. Where OVMS would convert a model
with optimum-cli, ovmsx stops with the commands to run instead (``conversion.py``).
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from ovmsx.config.errors import UsageError
from ovmsx.genai.task_graph import SERVED_TASKS, TEXT_GENERATION, TaskError, check_task, detect_task
from ovmsx.pull.conversion import conversion_advice
from ovmsx.pull.errors import PullError
from ovmsx.pull.graph_files import RELATIVE_MODELS_PATH, graph_text, write_graph
from ovmsx.pull.hub import Hub
from ovmsx.pull.repo_layout import (
    IN_PROGRESS_MARKER,
    check_repo_id,
    gguf_files,
    gguf_parts,
    is_openvino_ir,
    missing_files,
)
from ovmsx.pull.request import PullRequest, PullResult

OPENVINO_ORGANIZATION = "openvino/"
"""Repositories of the OpenVINO organization are OpenVINO models; OVMS refuses conversion
flags for them."""


def pull_model(
    request: PullRequest, hub: Hub | None = None, out: TextIO | None = None
) -> PullResult:
    """Download (or complete, or keep) the model, then write its graph.

    Raises ``UsageError`` for flags that cannot work (checked before any download when the task
    is known) and ``PullError`` for a failed download or write.
    """
    hub = hub or Hub.from_environment()
    out = out or sys.stdout
    folder = request.folder
    _check_request(request)
    if request.task is not None:
        _render(request, request.task)  # a task or flags that make no graph fail before download
    if request.gguf_filename is not None:
        downloaded = _pull_gguf(request, hub, out)
    else:
        downloaded = _pull_repository(request, hub, out)
    print(f"Model: {request.source_model} downloaded to: {folder}", file=out)
    task = _task(request, folder)
    _pull_draft(request, task, folder, hub, out)
    graph = write_graph(folder, _render(request, task))
    print(f"Graph: graph.pbtxt created in: {folder}", file=out)
    return PullResult(request.served_name, folder, task, graph, downloaded)


def _check_request(request: PullRequest) -> None:
    openvino = request.source_model.lower().startswith(OPENVINO_ORGANIZATION)
    if request.gguf_filename is None and openvino:
        if request.weight_format is not None:
            raise UsageError("--weight-format parameter unsupported for OpenVINO models.")
        if request.extra_quantization_params is not None:
            raise UsageError(
                "--extra_quantization_params parameter unsupported for OpenVINO models."
            )
    if request.gguf_filename is not None:
        gguf_parts(request.gguf_filename)
        if request.task not in (None, TEXT_GENERATION):
            raise UsageError(
                f"--gguf_filename: GGUF models are pulled for --task {TEXT_GENERATION} only"
            )
    draft = request.flags.text_generation and request.flags.text_generation.draft_source_model
    if draft and not Path(draft).exists():
        check_repo_id(draft, "--draft_source_model")
    if request.task is not None and request.serve:
        try:
            check_task(request.task)
        except TaskError as error:
            raise UsageError(
                f"{error}; pull it with --pull and serve it with OVMS, or pull a "
                f"{', '.join(SERVED_TASKS)} model"
            ) from None


def _pull_repository(request: PullRequest, hub: Hub, out: TextIO) -> bool:
    folder = request.folder
    complete = folder.is_dir() and not (folder / IN_PROGRESS_MARKER).exists()
    if complete and not request.overwrite_models:
        print(
            f"Path already exists on local filesystem. Skipping download to path: {folder}",
            file=out,
        )
        return False
    if request.weight_format is not None or request.extra_quantization_params is not None:
        reason = f"--weight-format asks for a conversion of {request.source_model}"
        raise PullError(_advice(request, request.source_model, folder, reason))
    _download_repository(hub, request.source_model, folder, out, request)
    return True


def _download_repository(
    hub: Hub, repo_id: str, folder: Path, out: TextIO, request: PullRequest
) -> None:
    """``repo_id`` into ``folder`` (the model, or its draft), if it is an OpenVINO model; with
    ``--overwrite_models`` what ``folder`` held goes first (only then: a refused pull deletes
    nothing)."""
    files = hub.repo_files(repo_id)
    if not is_openvino_ir(files):
        found = gguf_files(files)
        if found:
            raise PullError(
                f"{repo_id} holds GGUF files, not an OpenVINO model: pull one of them with "
                f"--gguf_filename ({', '.join(found)}); a model split in parts is named by its "
                "first part"
            )
        reason = f"{repo_id} is not in OpenVINO format: it has no openvino_model.xml"
        raise PullError(_advice(request, repo_id, folder, reason))
    if request.overwrite_models and folder.is_dir():
        with _disk(folder):
            shutil.rmtree(folder)
    with _in_progress(folder, out):
        hub.download_repository(repo_id, folder)
        missing = missing_files(folder, files)
        if missing:
            raise PullError(
                f"the download of {repo_id} to {folder} is incomplete ({', '.join(missing[:5])} "
                "missing); run the command again to continue it"
            )


def _pull_gguf(request: PullRequest, hub: Hub, out: TextIO) -> bool:
    folder = request.folder
    assert request.gguf_filename is not None
    parts = gguf_parts(request.gguf_filename)
    marker = folder / IN_PROGRESS_MARKER
    if request.overwrite_models:
        with _disk(folder):
            for part in parts:
                (folder / part).unlink(missing_ok=True)
    elif not missing_files(folder, parts) and not marker.exists():
        print(f"Model files already exist. Skipping download to path: {folder}", file=out)
        return False
    files = hub.repo_files(request.source_model)
    absent = [part for part in parts if part not in files]
    if absent:
        offered = gguf_files(files)
        raise PullError(
            f"{request.source_model} has no file {absent[0]}; its GGUF files: "
            + (", ".join(offered) if offered else "none")
        )
    with _in_progress(folder, out):
        hub.download_files(request.source_model, parts, folder)
    return True


def _pull_draft(request: PullRequest, task: str, folder: Path, hub: Hub, out: TextIO) -> None:
    flags = request.flags.text_generation
    draft = flags.draft_source_model if flags is not None else None
    if task != TEXT_GENERATION or not draft or Path(draft).exists():
        return
    check_repo_id(draft, "--draft_source_model")
    # OVMS's layout, which text_generation_graph points draft_models_path at.
    draft_folder = folder / draft.replace("/", "-")
    complete = draft_folder.is_dir() and not (draft_folder / IN_PROGRESS_MARKER).exists()
    if not complete or request.overwrite_models:
        _download_repository(hub, draft, draft_folder, out, request)
    print(f"Draft model: {draft_folder.name} downloaded to: {draft_folder}", file=out)


def _task(request: PullRequest, folder: Path) -> str:
    if request.task is not None:
        return request.task
    if request.gguf_filename is not None:
        task: str | None = TEXT_GENERATION  # GGUF files are language models
    else:
        task = detect_task(folder) or request.flags.implied_task()
    if task is None:
        raise UsageError(
            f"Could not infer model task - specify --task value explicitly (the config.json of "
            f"{folder} names no architecture it can be told from)"
        )
    if request.serve and task not in SERVED_TASKS:
        raise UsageError(
            f"{request.source_model} is a {task} model (from its config.json), which ovmsx does "
            "not serve yet; pull it with --pull to serve it with OVMS"
        )
    return task


def _render(request: PullRequest, task: str) -> str:
    models_path = RELATIVE_MODELS_PATH
    if request.gguf_filename is not None:
        models_path += request.gguf_filename
    return graph_text(
        task,
        request.flags,
        models_path=models_path,
        target_device=request.target_device,
        plugin_config=request.plugin_config,
        cache_dir=request.cache_dir,
    )


def _advice(request: PullRequest, repo_id: str, folder: Path, reason: str) -> str:
    draft = repo_id != request.source_model
    return conversion_advice(
        repo_id,
        TEXT_GENERATION if draft else request.task or request.flags.implied_task(),
        folder,
        reason=reason,
        weight_format=request.weight_format,
        extra_quantization_params=request.extra_quantization_params,
        target_device=request.target_device,
    )


@contextlib.contextmanager
def _in_progress(folder: Path, out: TextIO) -> Iterator[None]:
    """Mark ``folder`` as being downloaded until the body succeeds: an interrupted download
    (an error, Ctrl-C, a killed process) leaves the mark, and the next pull completes it."""
    marker = folder / IN_PROGRESS_MARKER
    with _disk(folder):
        resumed = marker.exists()
        folder.mkdir(parents=True, exist_ok=True)
        marker.touch()
    if resumed:
        print(f"Resuming the interrupted download to: {folder}", file=out)
    yield
    with _disk(folder):
        marker.unlink(missing_ok=True)


@contextlib.contextmanager
def _disk(path: Path) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        place = error.filename or path
        raise PullError(f"cannot write to {place}: {error.strerror or error}") from None
