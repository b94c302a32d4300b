"""The READMEs' LLM commands run as written, pasted at the root of a checkout next to the
installed ovmsx: there the checkout's ``ovmsx/`` (no compiled core) is first on the path of
every ``python -m`` / ``python -c`` child, which once killed each LLM engine at start.

Each block runs verbatim in bash from a copy of the repository's tracked files (the
``pip install`` lines aside: the test's environment has installed them), with its ports
swapped for free ones; the block's ``&`` server, its ``ovmsx-wait-ready`` line and its client
must all work. (An editable install maps ``ovmsx`` ahead of the path, so the shadowing needs a
wheel install, as CI's ``pip install '.[test]'``; there, starting the engine with
``python -m`` fails every case here.)
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from serving_process import free_port

ROOT = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"```bash\n(.*?)```", re.DOTALL)


def _block(readme: str, first_command: str) -> str:
    """The README's bash block holding ``first_command``."""
    for block in _BLOCK.findall((ROOT / readme).read_text()):
        if first_command in block:
            return block
    raise AssertionError(f"{readme} has no block with {first_command!r}")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's tracked files, as a fresh clone has them (no ``_core`` in ``ovmsx/``)."""
    copy = tmp_path_factory.mktemp("checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / name.decode()
        if source.is_file():
            target = copy / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    assert not list((copy / "ovmsx").glob("_core*.so"))
    return copy


def _run(checkout: Path, block: str) -> subprocess.CompletedProcess[str]:
    rest, grpc = free_port(), free_port()
    lines = [line for line in block.splitlines() if not line.startswith("pip install")]
    script = "\n".join(lines).replace("8000", str(rest)).replace("9000", str(grpc))
    # The background server goes when the block ends, however it ends.
    prologue = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"
    return subprocess.run(
        ["bash", "-c", prologue + script],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


CASES = {
    "readme-llm": ("README.md", "examples/llm/build_llm_folder.py"),
    "llm-graph": ("examples/llm/README.md", "examples/llm/build_llm_folder.py"),
    "agent": ("examples/agent/README.md", "build_agent_model.py"),
    "rag": ("examples/rag/README.md", "build_encoder_folders.py"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_readme_llm_block_runs_from_the_checkout_root(checkout: Path, case: str) -> None:
    readme, command = CASES[case]
    done = _run(checkout, _block(readme, command))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), done.stderr
    assert "Mediapipe is not loaded yet" not in done.stdout + done.stderr


def test_the_task_command_runs_from_the_checkout_root(checkout: Path) -> None:
    """examples/llm's ``--task text_generation`` line, in the background, with the folder the
    README builds first and its client after."""
    (task_line,) = [
        line
        for line in _block("examples/llm/README.md", "--task text_generation").splitlines()
        if "--task text_generation" in line
    ]
    block = "\n".join(
        [
            "python examples/llm/build_llm_folder.py examples/llm/models/tiny",
            task_line + " &",
            "ovmsx-wait-ready --rest_port 8000",
            "python examples/llm/client.py --url http://127.0.0.1:8000/v3",
        ]
    )
    done = _run(checkout, block)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), done.stderr
