"""``python -m ovmsx.pull`` as a process: its exit codes, its output, the progress bar shown
on a terminal only, and a pull killed mid-download that the next pull completes."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from pull_fake_hub import FakeHub
from pull_outcomes import LLM_CONFIG, Run

from ovmsx.config.errors import EX_USAGE
from ovmsx.pull.errors import EX_FAILURE
from ovmsx.pull.repo_layout import IN_PROGRESS_MARKER

REPO = "OpenVINO/tiny-llm-int4-ov"
TIMEOUT = 120


def _environment(hub_url: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "COLUMNS")}
    env.update(HF_ENDPOINT=hub_url, HF_HOME=str(home), PYTHONUNBUFFERED="1")
    return env


def _command(*argv: str | Path) -> list[str]:
    return [sys.executable, "-m", "ovmsx.pull", *map(str, argv)]


def _run(hub_url: str, tmp_path: Path, *argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(*argv),
        env=_environment(hub_url, tmp_path / "hf_home"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_a_pull_exits_0_and_prints_only_its_report(
    hub: FakeHub, llm_files: dict[str, bytes], tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)
    models = tmp_path / "models"

    done = _run(hub.url, tmp_path, "--pull", "--source_model", REPO, "--model_repository_path",
                models, "--task", "text_generation")  # fmt: skip

    assert done.returncode == 0, done.stderr
    folder = models / REPO
    assert done.stdout.splitlines() == [
        f"Model: {REPO} downloaded to: {folder}",
        f"Graph: graph.pbtxt created in: {folder}",
    ]
    assert done.stderr == ""  # no progress bar without a terminal
    assert (folder / "openvino_model.bin").read_bytes() == llm_files["openvino_model.bin"]


def test_failures_exit_1_with_one_line_on_stderr(
    hub: FakeHub, closed_port: int, tmp_path: Path
) -> None:
    missing = _run(hub.url, tmp_path, "--pull", "--source_model", "acme/none",
                   "--model_repository_path", tmp_path)  # fmt: skip
    assert missing.returncode == EX_FAILURE
    assert missing.stderr.startswith(f"ovmsx: repository acme/none was not found on {hub.url}")
    assert missing.stdout == ""

    offline = _run(f"http://127.0.0.1:{closed_port}", tmp_path, "--pull", "--source_model",
                   REPO, "--model_repository_path", tmp_path)  # fmt: skip
    assert offline.returncode == EX_FAILURE
    assert offline.stderr.startswith(
        "ovmsx: cannot reach the Hugging Face hub at http://127.0.0.1:"
    )
    assert len(offline.stderr.splitlines()) == 1


def test_refused_flags_exit_64(hub: FakeHub, tmp_path: Path) -> None:
    done = _run(hub.url, tmp_path, "--pull", "--model_repository_path", tmp_path)

    assert done.returncode == EX_USAGE
    assert done.stderr == "ovmsx: source_model parameter is required for pull mode\n"
    assert hub.requests == []


def test_a_pull_that_would_serve_tells_the_command_to_serve_it(
    hub: FakeHub, llm_files: dict[str, bytes], tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)

    done = _run(hub.url, tmp_path, "--source_model", REPO, "--model_repository_path", "models",
                "--rest_port", "8000")  # fmt: skip

    assert done.returncode == 0, done.stderr
    folder = tmp_path / "models" / REPO
    assert done.stdout.splitlines()[-1] == (
        f"To serve it: ovmsx --rest_port 8000 --model_name {REPO} --model_path {folder}"
    )


def test_the_progress_bar_shows_on_a_terminal(
    hub: FakeHub, llm_files: dict[str, bytes], tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)
    leader, follower = pty.openpty()
    # A new terminal is 0 columns wide, where tqdm draws an empty bar.
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    with subprocess.Popen(
        _command("--pull", "--source_model", REPO, "--model_repository_path", tmp_path / "m"),
        env=_environment(hub.url, tmp_path / "hf_home"),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
    ) as process:
        os.close(follower)
        output = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            output += chunk
        assert process.wait(timeout=TIMEOUT) == 0, output.decode(errors="replace")
    os.close(leader)
    text = output.decode(errors="replace")
    assert "Fetching 6 files" in text
    assert "100%" in text
    assert f"Model: {REPO} downloaded to:" in text


def test_a_pull_killed_mid_file_is_completed_by_the_next_pull(
    hub: FakeHub, big_ir_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    files = {**big_ir_files, "config.json": LLM_CONFIG}
    hub.add_repo(REPO, files)
    stall = hub.stall(REPO, "openvino_model.bin", after=11 * 1024 * 1024)
    models = tmp_path / "models"
    folder = models / REPO
    kept = ("config.json", "openvino_model.xml")
    with subprocess.Popen(
        _command("--pull", "--source_model", REPO, "--model_repository_path", models),
        env=_environment(hub.url, tmp_path / "hf_home"),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as process:
        try:
            assert stall.reached.wait(TIMEOUT), "the download never reached the weights"
            metadata = folder / ".cache" / "huggingface" / "download"
            deadline = time.monotonic() + TIMEOUT
            while not all((metadata / f"{name}.metadata").is_file() for name in kept):
                assert time.monotonic() < deadline, "the small files were never completed"
                time.sleep(0.05)
        finally:
            process.kill()
            process.wait(timeout=TIMEOUT)
            stall.release.set()
    assert (folder / IN_PROGRESS_MARKER).exists()
    assert not (folder / "openvino_model.bin").exists()

    outcome = ovmsx_mode("--pull", "--source_model", REPO, "--model_repository_path", models)

    assert outcome.code == 0, outcome.err
    assert f"Resuming the interrupted download to: {folder}" in outcome.out
    for name in kept:  # complete files are not fetched again
        assert len(hub.file_gets(REPO, name)) == 1, name
    assert len(hub.file_gets(REPO, "openvino_model.bin")) == 2
    assert (folder / "openvino_model.bin").read_bytes() == files["openvino_model.bin"]
    assert not (folder / IN_PROGRESS_MARKER).exists()


@pytest.mark.parametrize("argv", [[], ["--rest_port", "8000", "--model_name", "m"]])
def test_a_serving_command_line_is_not_a_mode(argv: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        _command(*argv), cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
        check=False,
    )  # fmt: skip

    assert done.returncode == EX_USAGE
    assert done.stderr.startswith("ovmsx: nothing to do: give --pull")


def test_telling_a_mode_from_serving_does_not_import_huggingface_hub(tmp_path: Path) -> None:
    """The ovmsx command checks every command line; only a pull pays for huggingface_hub."""
    code = (
        "import sys\n"
        "from ovmsx.pull.mode_args import parse_other_mode\n"
        "assert parse_other_mode(['--rest_port', '8000']) is None\n"
        "assert parse_other_mode(['--list_models', '--model_repository_path', '.']) is not None\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('huggingface_hub', 'httpx2')))"
    )

    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
        timeout=TIMEOUT, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
