"""examples/pipelines: prepare it, serve its config, run its client."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from serving_process import ServerProcess

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pipelines"


def test_pipeline_example_client_gets_the_right_answers(tmp_path) -> None:
    folder = tmp_path / "pipelines"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("config.json", "models"))
    subprocess.run([sys.executable, str(folder / "prepare.py")], check=True, cwd=tmp_path)
    server = ServerProcess(["--config_path", str(folder / "config.json")], tmp_path)
    try:
        server.wait_ready()
        done = subprocess.run(
            [sys.executable, str(folder / "client.py"), "--url", server.url],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        assert server.stop() == 0, server.log()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok: both pipelines answered as expected" in done.stdout
