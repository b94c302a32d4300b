"""The files a graph is loaded from, and one digest of what they hold.

OVMS reloads a graph when its entry in the config changes or its ``.pbtxt`` does (MD5). ovmsx
also watches the graph's subconfig and the Python handler scripts its nodes name
(``PythonExecutorCalculatorOptions.handler_path``): editing any of them reloads the graph.
Calculator modules (``calculator_modules``) are imported once per process and are not watched.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.graph.calculators.python_executor import OPTIONS as PYTHON_OPTIONS
from ovmsx.graph.graph_config import parse_graph
from ovmsx.status import StatusError

_MISSING = b"\0missing"  # stands for a file that cannot be read (its absence is a change too)


def fingerprint(config: MediapipeConfig) -> str:
    """MD5 over the graph's files, their paths included; reads files (call off the loop)."""
    digest = hashlib.md5()
    if config.graph_text is not None:  # built in memory (--task): no file to watch
        return hashlib.md5(config.graph_text.encode()).hexdigest()
    try:
        graph_file = config.graph_file
    except StatusError:  # a cloud path: nothing local to watch
        return ""
    text = _read(graph_file)
    digest.update(f"{graph_file}\0".encode())
    digest.update(text)
    files: list[Path] = []
    subconfig = config.subconfig_file
    if subconfig is not None:
        files.append(subconfig)
    files.extend(_handlers(text, str(graph_file), config.base_dir))
    for path in files:
        digest.update(f"\0{path}\0".encode())
        digest.update(_read(path))
    return digest.hexdigest()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return _MISSING


@functools.lru_cache(maxsize=256)
def _handlers(text: bytes, source: str, base_dir: Path) -> tuple[Path, ...]:
    """The handler scripts a graph file names, resolved as PythonExecutorCalculator does;
    none when the file does not parse (loading it reports that). Cached: the same graph file
    is looked at on every poll."""
    try:
        graph = parse_graph(text.decode("utf-8"), source)
    except Exception:  # whatever is wrong with it, loading the graph reports it
        return ()
    found = []
    for node in graph.nodes:
        options = node.options.get(PYTHON_OPTIONS)
        handler = getattr(options, "handler_path", "")
        if handler:
            path = Path(handler.replace("\\", "/"))
            found.append(path if path.is_absolute() else base_dir / path)
    return tuple(found)
