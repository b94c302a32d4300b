"""The soak's model repository and the changes made to it while requests run.

Served: ``add_one`` (never changes), ``churn`` (a copy of it whose version 2 comes and goes),
``extra`` (a model added to and removed from config.json), the Python graphs of
bench_graphs.py (``py_add_one``, whose handler is edited, and the streaming ``py_tokens``).
Each change is followed by ``POST /v1/config/reload``, and once a cycle config.json is broken on
purpose: that reload must fail and leave everything serving.
"""

from __future__ import annotations

import http.client
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import bench_graphs


class Repository:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.config_path, add_one = bench_graphs.write_repository(root)
        self.model_file = add_one.model_file
        self.config = json.loads(self.config_path.read_text())
        for name in ("churn", "extra"):
            self._copy_version(name, 1)
        self.config["model_config_list"].append(self._entry("churn"))
        self._write()
        self.edits = 0

    def _entry(self, name: str) -> dict:
        entry = json.loads(json.dumps(self.config["model_config_list"][0]))
        entry["config"]["name"] = name
        entry["config"]["base_path"] = str((self.root / name).resolve())
        return entry

    def _copy_version(self, name: str, version: int) -> None:
        # Renamed into place whole, so the poller never sees a half-written version folder.
        staging = self.root / f".{name}-{version}"
        shutil.copytree(self.model_file.parent, staging)
        target = self.root / name / str(version)
        target.parent.mkdir(exist_ok=True)
        staging.rename(target)

    def _write(self, text: str | None = None) -> None:
        staging = self.config_path.with_suffix(".tmp")
        staging.write_text(text if text is not None else json.dumps(self.config, indent=2))
        staging.rename(self.config_path)

    # The changes, in the order the soak makes them; each returns what the reload must answer.

    def add_version(self) -> int:
        self._copy_version("churn", 2)
        return 200

    def add_model(self) -> int:
        self.config["model_config_list"].append(self._entry("extra"))
        self._write()
        return 200

    def edit_handler(self) -> int:
        self.edits += 1
        handler = self.root / "py_add_one" / "add_one.py"
        handler.write_text(f"{bench_graphs.ADD_ONE_HANDLER}\n# edit {self.edits}\n")
        return 200

    def remove_version(self) -> int:
        shutil.rmtree(self.root / "churn" / "2")
        return 200

    def remove_model(self) -> int:
        self.config["model_config_list"] = [
            e for e in self.config["model_config_list"] if e["config"]["name"] != "extra"
        ]
        self._write()
        return 200

    def break_config(self) -> int:
        self._write('{"model_config_list": [')
        return 412  # OVMS's code for a config.json that is not JSON

    def restore_config(self) -> int:
        self._write()
        return 200

    def changes(self) -> list[Callable[[], int]]:
        return [
            self.add_version,
            self.add_model,
            self.edit_handler,
            self.remove_version,
            self.remove_model,
            self.break_config,
            self.restore_config,
        ]


def reload(host: str, port: int) -> tuple[int, bytes]:
    """``POST /v1/config/reload`` on a connection of its own; the HTTP status and body."""
    connection = http.client.HTTPConnection(host, port, timeout=300)
    try:
        connection.request("POST", "/v1/config/reload", b"")
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()
