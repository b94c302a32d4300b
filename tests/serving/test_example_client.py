"""The README's example: serve examples/config.json and run its client against it."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from serving_process import ServerProcess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_example_client_gets_its_answer_and_server_stops_cleanly(tmp_path: Path) -> None:
    server = ServerProcess(["--config_path", str(EXAMPLES / "config.json")], tmp_path)
    try:
        server.wait_ready()
        client = subprocess.run(
            [sys.executable, str(EXAMPLES / "add_one" / "client.py"), "--url", server.url],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert client.returncode == 0, client.stderr
        assert "output: [[ 1.  2.  3.  4.  5.  6.  7.  8.  9. 10.]]" in client.stdout
    finally:
        code = server.stop(signal.SIGTERM)
    assert code == 0, server.log()
    assert "Loaded model add_one; version: 1;" in server.log()
