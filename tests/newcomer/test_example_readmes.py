"""Every example folder explains itself in a README.md, and every package its scripts import
beyond ovmsx and its own dependencies is named in a ``pip install`` line of that README and of
the top-level README (tritonclient with the extras, grpc or http, the scripts use)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir())
OWN_MODULES = {"ovmsx", "pyovms"}  # what `pip install .` itself provides
# The extra of a distribution a submodule needs, where it has one.
EXTRAS = {"tritonclient.grpc": "grpc", "tritonclient.http": "http"}


def _installed_with_ovmsx() -> set[str]:
    """The distributions `pip install ovmsx` brings (its requirements without an extra)."""
    return {
        Requirement(line).name.lower()
        for line in importlib.metadata.requires("ovmsx") or []
        if "extra ==" not in line
    }


def _imports(folder: Path) -> set[str]:
    """Dotted names every .py file in ``folder`` imports, nested imports included."""
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    return names


def needed(folder: Path) -> dict[str, set[str]]:
    """Distribution -> extras the scripts of ``folder`` need beyond ovmsx and the stdlib."""
    # Modules of the examples themselves: the agent example builds its model with examples/llm's
    # builder, which its README runs from the repository.
    siblings = {path.stem for path in folder.parent.rglob("*.py")}
    owners = importlib.metadata.packages_distributions()
    with_ovmsx = _installed_with_ovmsx()
    wanted: dict[str, set[str]] = {}
    for name in _imports(folder):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in siblings or top in OWN_MODULES:
            continue
        assert top in owners, f"{folder.name} imports {name}, which no installed package provides"
        distributions = {d.lower() for d in owners[top]}
        if distributions & with_ovmsx:
            continue
        extras = wanted.setdefault(sorted(distributions)[0], set())
        for module, extra in EXTRAS.items():
            if name == module or name.startswith(module + "."):
                extras.add(extra)
    return wanted


def pip_installs(readme: Path) -> dict[str, set[str]]:
    """Distribution -> extras named by the ``pip install`` lines of ``readme``."""
    named: dict[str, set[str]] = {}
    for line in re.findall(r"pip install ([^\n#`]+)", readme.read_text()):
        for word in line.partition("&&")[0].split():
            word = word.strip("'\"")
            if word.startswith((".", "-")):  # the project itself, or an option
                continue
            requirement = Requirement(word)
            named.setdefault(requirement.name.lower(), set()).update(requirement.extras)
    return named


def _missing(wanted: dict[str, set[str]], named: dict[str, set[str]]) -> list[str]:
    return [
        f"{name}[{','.join(sorted(extras))}]" if extras else name
        for name, extras in sorted(wanted.items())
        if name not in named or not extras <= named[name]
    ]


@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda p: p.name)
def test_every_example_has_a_readme(folder: Path) -> None:
    readme = folder / "README.md"
    assert readme.is_file(), f"examples/{folder.name} has no README.md"
    assert readme.read_text().startswith(f"# {folder.name}: ")


@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda p: p.name)
def test_an_example_readme_installs_what_its_scripts_import(folder: Path) -> None:
    missing = _missing(needed(folder), pip_installs(folder / "README.md"))
    assert not missing, f"examples/{folder.name}/README.md installs none of {missing}"


def test_the_top_readme_installs_every_client_of_the_examples() -> None:
    wanted: dict[str, set[str]] = {}
    for folder in EXAMPLES:
        for name, extras in needed(folder).items():
            wanted.setdefault(name, set()).update(extras)
    # What the examples use today: tritonclient, and for examples/llm the openai client and
    # what builds its model folder.
    assert wanted == {
        "tritonclient": {"grpc", "http"},
        "openai": set(),
        "tokenizers": set(),
        "transformers": set(),
        "openvino-tokenizers": set(),
    }
    assert not _missing(wanted, pip_installs(ROOT / "README.md"))
