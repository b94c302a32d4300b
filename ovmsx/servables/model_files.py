"""Where a model's versions and files are on disk (OVMS model repository layout).

``base_path/<version>/<model file>``: version folders have positive integer names; other
entries are ignored. Inside a version folder the first format found wins, in OVMS's order.
As in OVMS, ``base_path`` may also be a single model file, served as version 1.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ovmsx.status import StatusCode, status_error

log = logging.getLogger("ovmsx.models")

# (suffixes that must all be present, which of them OpenVINO is given), in OVMS's priority.
_FORMATS: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".xml", ".bin"), ".xml"),
    ((".onnx",), ".onnx"),
    ((".pdmodel", ".pdiparams"), ".pdmodel"),
    ((".pb",), ".pb"),
    ((".tflite",), ".tflite"),
)


# Files a base path may name directly (OVMS's list); .pdiparams stands for its .pdmodel.
_SINGLE_FILES = (".xml", ".onnx", ".pdmodel", ".pdiparams", ".pb", ".tflite")


def is_version_name(name: str) -> bool:
    """Whether a folder name is a version number: a positive integer in decimal digits."""
    return name.isdigit() and int(name) > 0


def version_folders(base_path: Path, warn: bool = True) -> dict[int, Path]:
    """``{version: folder}`` of every numeric sub-folder of ``base_path``; ``{1: base_path}``
    when it is a model file. ``warn``: log the folders ignored (not on every poll)."""
    if base_path.is_file():
        if base_path.suffix not in _SINGLE_FILES:
            raise status_error(
                StatusCode.FILE_INVALID,
                f"{base_path}: a model file is one of {', '.join(_SINGLE_FILES)}",
            )
        return {1: base_path}
    if not base_path.is_dir():
        raise status_error(StatusCode.PATH_INVALID, str(base_path))
    found: dict[int, Path] = {}
    for entry in base_path.iterdir():
        if entry.is_dir() and is_version_name(entry.name):
            found[int(entry.name)] = entry
        elif entry.is_dir() and warn:
            log.warning(
                "%s: ignoring folder %r, version folders have numeric names", base_path, entry.name
            )
    if not found:
        raise status_error(StatusCode.NO_MODEL_VERSION_AVAILABLE, str(base_path))
    return found


def model_file(version_folder: Path) -> Path:
    """The file to give OpenVINO for one version folder (or a base path that is a file)."""
    if version_folder.is_file():
        if version_folder.suffix == ".pdiparams":
            return version_folder.with_suffix(".pdmodel")
        return version_folder
    files = sorted(p for p in version_folder.iterdir() if p.is_file())
    for suffixes, entry in _FORMATS:
        if all(any(p.name.endswith(s) for p in files) for s in suffixes):
            if entry == ".pb" and (version_folder / "saved_model.pb").exists():
                return version_folder  # a TensorFlow SavedModel is read as its folder
            return next(p for p in files if p.name.endswith(entry))
    raise status_error(
        StatusCode.FILE_INVALID, f"{version_folder}: no .xml+.bin, .onnx, .pdmodel, .pb or .tflite"
    )


def folder_signature(folder: Path) -> tuple:
    """What a version folder (or model file) holds, by name, size and modification time:
    cheap to take, and it changes when the files do."""
    try:
        paths = [folder] if folder.is_file() else sorted(folder.rglob("*"))
        return tuple((str(p), s.st_size, s.st_mtime_ns) for p in paths if (s := p.stat()))
    except OSError:
        return ()
