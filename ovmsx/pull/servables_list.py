"""``--list_models``: the servables a model repository holds, named as OVMS names them.

OVMS (src/config_export_module/config_export.cpp, ``listServables``) walks the repository:
a folder holding ``graph.pbtxt`` is a graph, a folder with a version subfolder (``1``, ``2``,
..., no leading zero) holding model files is a model; the walk does not go below either. Each
is named by its path under the repository (``OpenVINO/Phi-3-mini-int4-ov`` for a pulled
model). Hidden folders (huggingface_hub's ``.cache``) hold no servables and are skipped.
"""

from __future__ import annotations

from pathlib import Path

GRAPH_FILE = "graph.pbtxt"
# The file kinds of a model version, each as the suffixes that must all be present (OVMS's
# OV, ONNX, Paddle, TensorFlow and TFLite sets).
_MODEL_FILE_SETS = (
    (".xml", ".bin"),
    (".onnx",),
    (".pdmodel", ".pdiparams"),
    (".pb",),
    (".tflite",),
)


def list_servables(repository: Path) -> list[str]:
    """The servables under ``repository``, sorted; ``[]`` when it is not a folder."""
    if not repository.is_dir():
        return []
    found: list[str] = []
    for entry in sorted(repository.iterdir()):
        _walk(entry, repository, found)
    return sorted(found)


def _walk(folder: Path, repository: Path, found: list[str]) -> None:
    if not folder.is_dir() or folder.name.startswith("."):
        return
    if (folder / GRAPH_FILE).is_file() or _has_model_version(folder):
        found.append(folder.relative_to(repository).as_posix())
        return
    try:
        entries = sorted(folder.iterdir())
    except OSError:  # unreadable: nothing OVMS could serve from it either
        return
    for entry in entries:
        _walk(entry, repository, found)


def _has_model_version(folder: Path) -> bool:
    try:
        entries = list(folder.iterdir())
    except OSError:
        return False
    for version in entries:
        name = version.name
        if not (name.isdigit() and name[0] != "0" and version.is_dir()):
            continue
        try:
            suffixes = {path.suffix for path in version.iterdir() if path.is_file()}
        except OSError:
            continue
        if any(set(required) <= suffixes for required in _MODEL_FILE_SETS):
            return True
    return False
