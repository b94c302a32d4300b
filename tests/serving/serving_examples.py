"""The examples as a user runs them: copied out of the repository, prepared, and their client."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLIENT_TIMEOUT = 60


def prepared_copy(name: str, root: Path, *arguments: str) -> Path:
    """``examples/<name>`` copied under ``root`` (without models or samples built earlier), with
    its ``prepare.py`` run there with ``arguments``."""
    folder = root / name
    built = shutil.ignore_patterns("models", "samples", "__pycache__")
    shutil.copytree(EXAMPLES / name, folder, ignore=built)
    command = [sys.executable, str(folder / "prepare.py"), *arguments]
    subprocess.run(command, check=True, cwd=root)
    return folder


def run_client(folder: Path, url: str, server_log: str = "", *arguments: str) -> str:
    """Run the example's ``client.py`` against ``url``; its output, once it exited with 0."""
    done = subprocess.run(
        [sys.executable, str(folder / "client.py"), "--url", url, *arguments],
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr + server_log
    return done.stdout
