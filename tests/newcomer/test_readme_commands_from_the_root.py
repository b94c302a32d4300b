"""The READMEs' blocks that start a server with ``&`` run as written, pasted at the root of a
checkout beside an installed ovmsx.

There the checkout's ``ovmsx/`` (no compiled core) is first on the path of every ``python -m``
or ``python -c`` child ovmsx starts, which once killed each LLM engine at start; and a client
pasted on the line after the ``&`` once ran before its server listened.

Each block runs verbatim in bash from a copy of the repository's tracked files (the
``pip install`` lines aside: the test's environment has installed them), with its ports swapped
for free ones. The ovmsx those commands run is installed as a wheel installs it (see
``installed``), so the checkout's ``ovmsx/`` shadows it exactly as it would for a user.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from serving_process import free_port

import ovmsx
import ovmsx._core
import pyovms

ROOT = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"```bash\n(.*?)```", re.DOTALL)
READMES = [
    "README.md",
    *(str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("examples/*/README.md"))),
]
# A wheel's ovmsx is found on sys.path, after the current folder. An editable install's import
# hook (a sys.meta_path finder) outranks sys.path, so with it the shadowing never happens; this
# file, as the ``sitecustomize`` of the stand-in install, takes such hooks away.
_NO_EDITABLE_HOOK = """import sys
sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("_editable")]
"""


def _background_blocks() -> dict[str, str]:
    """Every README bash block with a command ending in ``&``, by ``README#index``."""
    found = {}
    for readme in READMES:
        for index, block in enumerate(_BLOCK.findall((ROOT / readme).read_text())):
            if any(line.rstrip().endswith(" &") for line in block.splitlines()):
                found[f"{readme}#{index}"] = block
    return found


BLOCKS = _background_blocks()


def _block(readme: str, holding: str) -> str:
    for key, block in BLOCKS.items():
        if key.startswith(readme + "#") and holding in block:
            return block
    raise AssertionError(f"{readme} has no server block with {holding!r}")


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


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, checkout: Path) -> dict[str, str]:
    """The environment of a shell where ovmsx is installed as a wheel installs it: the whole
    package (sources and compiled core together) in a folder on ``PYTHONPATH``, no import
    hook. The console scripts (``ovmsx``, ``ovmsx-wait-ready``) import it from there."""
    site = tmp_path_factory.mktemp("site-packages")
    skip = shutil.ignore_patterns("__pycache__")
    for package in (ovmsx, pyovms):
        shutil.copytree(Path(package.__file__).parent, site / package.__name__, ignore=skip)
    # The compiled part (the core, custom-node headers and libraries) of an editable install
    # lives apart from the sources.
    compiled = Path(ovmsx._core.__file__).parent
    shutil.copytree(compiled, site / "ovmsx", ignore=skip, dirs_exist_ok=True)
    (site / "sitecustomize.py").write_text(_NO_EDITABLE_HOOK)
    # The core finds OpenVINO's libraries at $ORIGIN/../openvino/libs, beside it in
    # site-packages; from the copy, the loader is told where they are.
    libraries = compiled.parent / "openvino" / "libs"
    environment = {
        **os.environ,
        "PYTHONPATH": _joined(site, os.environ.get("PYTHONPATH")),
        "LD_LIBRARY_PATH": _joined(libraries, os.environ.get("LD_LIBRARY_PATH")),
    }
    # The trap is live: a plain ``python -c`` at the checkout's root finds its ovmsx first,
    # and the console script finds the installed one.
    where = "import importlib.util as u; print(u.find_spec('ovmsx').origin)"
    shadowed = _python(["python", "-c", where], checkout, environment)
    assert shadowed == str(checkout / "ovmsx" / "__init__.py")
    assert _python(["python", "-c", where], site.parent, environment).startswith(str(site))
    version = _python(["ovmsx", "--version"], checkout, environment)
    assert version.startswith(f"ovmsx {ovmsx.__version__}")
    return environment


def _joined(first: Path, rest: str | None) -> str:
    return os.pathsep.join([str(first), *filter(None, (rest or "").split(os.pathsep))])


def _python(command: list[str], cwd: Path, environment: dict[str, str]) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip()


def _run(checkout: Path, environment: dict[str, str], block: str) -> subprocess.CompletedProcess:
    rest, grpc = free_port(), free_port()
    lines = [line for line in block.splitlines() if not line.startswith("pip install")]
    script = "\n".join(lines).replace("8000", str(rest)).replace("9000", str(grpc))
    # The background server stops when the block ends, however it ends, and is waited for.
    prologue = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n"
    return subprocess.run(
        ["bash", "-c", prologue + script],
        cwd=checkout,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("key", sorted(BLOCKS))
def test_a_readme_server_block_runs_as_written_from_the_checkout_root(
    checkout: Path, installed: dict[str, str], key: str
) -> None:
    done = _run(checkout, installed, BLOCKS[key])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), done.stderr
    assert "Mediapipe is not loaded yet" not in done.stdout + done.stderr


def test_the_readmes_llm_blocks_are_among_them() -> None:
    for readme, holding in (
        ("README.md", "examples/llm/build_llm_folder.py"),
        ("examples/llm/README.md", "examples/llm/build_llm_folder.py"),
        ("examples/agent/README.md", "build_agent_model.py"),
        ("examples/rag/README.md", "build_encoder_folders.py"),
    ):
        _block(readme, holding)


def test_the_task_command_runs_from_the_checkout_root(
    checkout: Path, installed: dict[str, str]
) -> None:
    """examples/llm's ``--task text_generation`` line, in the background, with the folder the
    README builds first and its client after."""
    (task_line,) = [
        line
        for block in _BLOCK.findall((ROOT / "examples/llm/README.md").read_text())
        for line in block.splitlines()
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
    done = _run(checkout, installed, block)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), done.stderr
