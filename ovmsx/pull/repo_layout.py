"""Where a pulled model goes and what its files say about it.

OVMS puts ``--source_model ORG/NAME`` in ``<--model_repository_path>/ORG/NAME``, the folder
``graph.pbtxt`` is written to and the one served. A folder that already exists is taken as
downloaded (unless ``--overwrite_models``), except when the marker below says a download into
it never finished: then the download is run again and continues where it stopped (files that
are complete are kept; huggingface_hub re-fetches the rest).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ovmsx.config.errors import UsageError

IN_PROGRESS_MARKER = ".ovmsx_download_in_progress"
"""Written into the model folder before downloading, removed once every file is there."""

_PART = re.compile(r"(?P<stem>.*)-(?P<part>\d{5})-of-(?P<total>\d{5})\.gguf")


def model_folder(repository: Path, source_model: str) -> Path:
    """``repository / source_model``; refuses a name that would leave ``repository``."""
    check_repo_id(source_model, "--source_model")
    return repository / source_model


def check_repo_id(repo_id: str, flag: str) -> None:
    """A hub name ``NAME`` or ``ORG/NAME``; OVMS refuses ``..`` in it (``Path ... escape with ..
    is forbidden``), and an absolute name would put the download outside the repository."""
    parts = PurePosixPath(repo_id).parts
    if not repo_id or repo_id.startswith(("/", "\\")) or "\\" in repo_id:
        raise UsageError(f"{flag} {repo_id!r}: expected a Hugging Face name like ORG/NAME")
    if ".." in parts or "." in parts or len(parts) > 2:
        raise UsageError(
            f"{flag} {repo_id!r}: path escape with .. is forbidden; expected a Hugging Face "
            "name like ORG/NAME"
        )


def is_openvino_ir(files: Iterable[str]) -> bool:
    """True when the repository holds an OpenVINO model: some ``X.xml`` next to its ``X.bin``
    (``openvino_model.xml``, or the several models of a VLM or an image pipeline)."""
    names = set(files)
    return any(name.endswith(".xml") and name[:-4] + ".bin" in names for name in names)


def gguf_files(files: Iterable[str]) -> list[str]:
    """The ``.gguf`` files of a repository, sorted; of a split model only its first part."""
    found = []
    for name in sorted(files):
        if not name.endswith(".gguf"):
            continue
        part = _PART.fullmatch(name)
        if part is None or int(part["part"]) == 1:
            found.append(name)
    return found


def gguf_parts(filename: str) -> list[str]:
    """Every file of ``--gguf_filename``: itself, or all parts of a split model
    (``NAME-00001-of-00003.gguf`` names three), as OVMS downloads them."""
    part = _PART.fullmatch(filename)
    if part is None:
        return [filename]
    if part["part"] != "00001":
        raise UsageError(
            f"--gguf_filename {filename}: a split model is named by its first part, "
            f"{part['stem']}-00001-of-{part['total']}.gguf"
        )
    total = int(part["total"])
    if total == 0:
        raise UsageError(f"--gguf_filename {filename}: a split model has at least one part")
    return [f"{part['stem']}-{index:05d}-of-{part['total']}.gguf" for index in range(1, total + 1)]


def missing_files(folder: Path, files: Iterable[str]) -> list[str]:
    """The repository files that are not (yet) in ``folder``."""
    return [name for name in files if not (folder / name).is_file()]
