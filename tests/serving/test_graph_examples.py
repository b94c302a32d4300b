"""The Python node examples: serve each example's config.json and run its client against it."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from serving_process import ServerProcess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CLIENT_TIMEOUT = 60

# Example folder -> lines its client must print.
EXPECTED = {
    "python_increment": [
        "received:     [4. 5. 6.] (FP32, shape [3])",
        "ok: each of the three nodes added one",
    ],
    "python_generative": [
        "token: 'time'",
        "end:   11 tokens",
        "answer: time a at word one node python a from tokens streaming",
        "ok: the words came back in reverse order, one response each",
    ],
    "python_incomplete_inputs": [
        "animals: image [0.7, 0.2, 0.1] -> 'cat' ok",
        "colours: image [0.1, 0.1, 0.8] -> 'blue' ok",
        "colours: image [0.3, 0.6, 0.1] -> 'green' ok",
        "ok: each stream answered with its own labels",
    ],
}


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_example_client_gets_its_answer(example: str, tmp_path: Path) -> None:
    folder = EXAMPLES / example
    server = ServerProcess(["--config_path", str(folder / "config.json")], tmp_path)
    try:
        server.wait_ready()
        client = subprocess.run(
            [sys.executable, str(folder / "client.py"), "--url", server.url],
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT,
            check=False,
        )
        report = f"stdout:\n{client.stdout}\nstderr:\n{client.stderr}\nserver log:\n{server.log()}"
        assert client.returncode == 0, report
        for line in EXPECTED[example]:
            assert line in client.stdout, report
    finally:
        code = server.stop(signal.SIGTERM)
    assert code == 0, server.log()
