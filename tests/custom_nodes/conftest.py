"""Fixtures: the test nodes of ``nodes/*.c``, compiled once per session against the header the
installed wheel ships, exactly as a node author would build them.

Every test node counts what it hands out and what comes back (``nodes/counting.h``); tests
read those counters through ctypes, which dlopens the same path and so shares the library
the server loaded.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from counted_nodes import TestNode

import ovmsx.custom_nodes

NODE_SOURCES = Path(__file__).parent / "nodes"
# Extra compiler flags for the test nodes built here: .ci/sanitize sets them so that the nodes
# run under AddressSanitizer and UndefinedBehaviorSanitizer like the rest of the native code.
SANITIZE_FLAGS = shlex.split(os.environ.get("OVMSX_TEST_NODE_CFLAGS", ""))


@pytest.fixture(scope="session")
def node_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every ``nodes/<name>.c`` built as ``lib<name>.so``."""
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        pytest.fail(f"the custom-node tests need a C compiler ({compiler!r} not found)")
    out = tmp_path_factory.mktemp("custom_nodes")
    include = ovmsx.custom_nodes.include_dir()
    for source in sorted(NODE_SOURCES.glob("*.c")):
        target = out / f"lib{source.stem}.so"
        command = [compiler, "-shared", "-fPIC", "-O1", "-pthread", f"-I{include}", *SANITIZE_FLAGS]
        built = subprocess.run(
            [*command, str(source), "-o", str(target)], capture_output=True, text=True
        )
        assert built.returncode == 0, f"{source.name} did not compile:\n{built.stderr}"
    return out


@pytest.fixture(scope="session")
def node_path(node_dir: Path) -> Callable[[str], Path]:
    """The path of a built test node, by the stem of its source (``node_add``)."""

    def path(name: str) -> Path:
        return node_dir / f"lib{name}.so"

    return path


@pytest.fixture(scope="session")
def counted_node(node_path: Callable[[str], Path]) -> Callable[[str], TestNode]:
    """A built test node with its counters (``node_missing_symbol`` has none)."""
    return lambda name: TestNode(node_path(name))
