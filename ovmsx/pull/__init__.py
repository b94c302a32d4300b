"""OVMS's model pulling and config-management modes.

``ovms --pull --source_model ORG/NAME --model_repository_path DIR [--task TASK ...]`` downloads
an OpenVINO model from Hugging Face into ``DIR/ORG/NAME`` and writes ``graph.pbtxt`` beside it;
without ``--pull`` the folder is then served. ``--list_models`` lists a model repository;
``--add_to_config`` and ``--remove_from_config`` edit a ``config.json``.

Entry points:

- ``parse_other_mode(argv)``: the mode a command line asks for (``None`` for plain serving);
- ``run_other_mode(mode)``: run it, print what OVMS prints, return the exit code;
- ``pull(mode)``, ``pull_model(request)``, ``list_servables(path)``,
  ``add_to_config(path, entry)``, ``remove_from_config(path, name)``: the same, as functions
  that raise ``UsageError`` or ``PullError``;
- ``python -m ovmsx.pull ...``: the modes as a command (``cli.main``).

The names are loaded on first use: telling a serving command line from these modes
(``ovmsx.pull.mode_args``) does not import huggingface_hub, which only a pull needs.
"""

import importlib
import os

# huggingface_hub (read at its import) adds to its user agent the AI agent it believes runs the
# process, from a registry it fetches from the hub once a day. OVMS sends no telemetry; neither
# does ovmsx, unless HF_HUB_DISABLE_TELEMETRY says otherwise.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

_EXPORTS = {
    "Hub": "hub",
    "ModelEntry": "config_edit",
    "OtherMode": "mode_args",
    "PullError": "errors",
    "PullRequest": "request",
    "PullResult": "request",
    "TaskFlags": "task_flags",
    "add_to_config": "config_edit",
    "asks_for_other_mode": "mode_args",
    "graph_text": "graph_files",
    "list_servables": "servables_list",
    "main": "cli",
    "parse_other_mode": "mode_args",
    "pull": "cli",
    "pull_model": "model_pull",
    "remove_from_config": "config_edit",
    "run_other_mode": "cli",
    "write_graph": "graph_files",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
