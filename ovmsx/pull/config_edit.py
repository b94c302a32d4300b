"""``--add_to_config`` and ``--remove_from_config``: one model entry in a ``config.json``.

As OVMS (src/config_export_module/config_export.cpp): adding creates the file when it does not
exist (``{"model_config_list": [{"config": {"name": ..., "base_path": ...}}]}``) and refuses a
name already listed; removing refuses a missing file and a name not listed. The rest of the
file (other lists, other keys) is kept; the file is rewritten with 4-space indents, at once, so
that a server watching it never reads half of it. ``--add_to_config`` and
``--remove_from_config`` take the config file or the folder holding it (``config.json``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ovmsx.pull.errors import PullError

CONFIG_FILE = "config.json"
MODEL_LIST = "model_config_list"
OPTIONAL_FIELDS = (
    "batch_size",
    "shape",
    "layout",
    "mean",
    "scale",
    "color_format",
    "precision",
    "model_version_policy",
    "nireq",
    "target_device",
    "plugin_config",
)
"""Single-model flags an added entry carries, as OVMS writes them (JSON objects for
``shape``, ``layout``, ``model_version_policy`` and ``plugin_config`` when they parse as one)."""
_JSON_FIELDS = ("shape", "layout", "model_version_policy", "plugin_config")


@dataclass(frozen=True)
class ModelEntry:
    """The entry to add: its name, ``base_path`` (as given: a relative path is relative to the
    config file's folder), and optional fields."""

    name: str
    base_path: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "base_path": self.base_path}
        for key in OPTIONAL_FIELDS:
            value = self.settings.get(key)
            if value is None:
                continue
            if key in _JSON_FIELDS and isinstance(value, str):
                value = _object_or_text(value)
            entry[key] = value
        return entry


def config_file(path: Path) -> Path:
    """The config file ``path`` names: itself, or ``config.json`` in it when it is a folder."""
    return path / CONFIG_FILE if path.is_dir() else path


def add_to_config(path: Path, entry: ModelEntry) -> Path:
    """Add ``entry`` to the config at ``path`` (created if absent); returns the file."""
    file = config_file(path)
    if not file.exists():
        _write(file, {MODEL_LIST: [{"config": entry.config()}]})
        return file
    document = _read(file)
    models = document.setdefault(MODEL_LIST, [])
    if not isinstance(models, list):
        raise PullError(
            f"{file}: {MODEL_LIST} is not a list; the file is not a model server config"
        )
    if any(_name(item) == entry.name for item in models):
        raise PullError(
            f"Could not add model to configuration file: {entry.name}. Model with the same name "
            f"already exists. ({file})"
        )
    models.append({"config": entry.config()})
    _write(file, document)
    return file


def remove_from_config(path: Path, name: str) -> Path:
    """Remove the model ``name`` from the config at ``path``; returns the file."""
    file = config_file(path)
    if not file.exists():
        raise PullError(f"Config path does not exist: {file}")
    document = _read(file)
    models = document.get(MODEL_LIST)
    if not isinstance(models, list):
        raise PullError(f"{file}: it has no {MODEL_LIST}, so no model {name} to remove")
    # Only the first entry of that name goes, as in OVMS.
    index = next((i for i, item in enumerate(models) if _name(item) == name), None)
    if index is None:
        raise PullError(f"Configuration file doesn't have model with name: {name}. ({file})")
    del models[index]
    _write(file, document)
    return file


def _name(item: Any) -> Any:
    config = item.get("config") if isinstance(item, dict) else None
    return config.get("name") if isinstance(config, dict) else None


def _read(file: Path) -> dict[str, Any]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PullError(
            f"cannot read {file}: {getattr(error, 'strerror', None) or error}"
        ) from None
    try:
        document = json.loads(text)
    except ValueError as error:
        raise PullError(f"The file is not valid json: {file}: {error}") from None
    if not isinstance(document, dict):
        raise PullError(f"{file}: a model server config is a JSON object")
    return document


def _write(file: Path, document: dict[str, Any]) -> None:
    text = json.dumps(document, indent=4, ensure_ascii=False) + "\n"
    try:
        mode = file.stat().st_mode & 0o777 if file.exists() else 0o644
        handle, temporary = tempfile.mkstemp(prefix=".config.", suffix=".tmp", dir=file.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.chmod(temporary, mode)
            os.replace(temporary, file)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise PullError(f"cannot write {file}: {error.strerror or error}") from None


def _object_or_text(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text
