"""Options every generative node reads the same way (LLM, embeddings, rerank and the tasks to
come): the ``models_path`` a node names, and its ``plugin_config`` JSON, with OVMS's load
errors."""

from __future__ import annotations

import json
from pathlib import Path

from ovmsx.status import StatusCode, status_error


def resolve_models_path(text: str, base_dir: Path, node: str, field: str = "models_path") -> Path:
    """The folder (or .gguf file) ``field`` names; OVMS's load errors when there is none."""
    if not text:
        raise status_error(
            StatusCode.LLM_NODE_DIRECTORY_DOES_NOT_EXIST, f"node {node}: {field} is empty"
        )
    path = Path(text)
    if not path.is_absolute():
        path = base_dir / path
    path = path.resolve()
    if path.is_dir():
        gguf = sorted(path.glob("*.gguf"))
        if not (path / "openvino_model.xml").is_file() and gguf:
            return gguf[0]
        return path
    if path.is_file() and path.suffix == ".gguf":
        return path
    if not path.exists():
        raise status_error(
            StatusCode.LLM_NODE_DIRECTORY_DOES_NOT_EXIST, f"node {node}: {field} {path}"
        )
    raise status_error(
        StatusCode.LLM_NODE_PATH_DOES_NOT_EXIST_AND_NOT_GGUFFILE, f"node {node}: {path}"
    )


def parse_plugin_config(text: str, node: str) -> dict:
    if not text:
        return {}
    try:
        config = json.loads(text)
    except ValueError as error:
        raise status_error(
            StatusCode.PLUGIN_CONFIG_WRONG_FORMAT, f"node {node}: plugin_config: {error}"
        ) from None
    if not isinstance(config, dict):
        raise status_error(
            StatusCode.PLUGIN_CONFIG_WRONG_FORMAT, f"node {node}: plugin_config is not an object"
        )
    return config
