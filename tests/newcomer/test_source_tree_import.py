"""Importing ovmsx from a source tree, which has no compiled core, says what happened and what
to do, instead of a bare ``No module named 'ovmsx._core'``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import ovmsx
import pyovms


def _source_tree(root: Path) -> Path:
    """The Python sources of ovmsx and pyovms, laid out as in the repository: no ``_core``."""
    no_core = shutil.ignore_patterns("_core.*.so", "_core.*.pyd", "__pycache__")
    for package in (ovmsx, pyovms):
        source = Path(package.__file__).parent
        shutil.copytree(source, root / source.name, ignore=no_core)
    return root


def test_from_pyovms_import_tensor_in_a_source_tree_explains_itself(tmp_path: Path) -> None:
    tree = _source_tree(tmp_path)
    assert not list(tree.glob("ovmsx/_core*.so"))
    # -S: no site-packages, so the installed ovmsx cannot step in; the current directory,
    # first on sys.path as in `python -c` from the repository root, is all Python finds.
    done = subprocess.run(
        [sys.executable, "-S", "-c", "from pyovms import Tensor"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    error = done.stderr
    last = error.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: ovmsx's compiled core (ovmsx._core) is not in ")
    assert str(tree / "ovmsx") in last
    assert "source tree" in last
    assert "Run from another folder" in last
    assert "pip install -e ." in last
    # The original error is kept, chained.
    assert "No module named 'ovmsx._core'" in error
    assert "direct cause of the following exception" in error


def test_the_installed_package_imports(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from pyovms import Tensor; print(Tensor.__module__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ovmsx._core"
