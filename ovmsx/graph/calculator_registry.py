"""Which calculator a graph's ``calculator:`` name means.

One table holds them all: the built-in ones register at import, user ``PythonCalculator``
classes when their module is imported (``@register_calculator``), and packages may offer
more through the ``ovmsx.calculators`` entry point group (name = calculator, value =
``module:Class``), loaded the first time a graph names one. Names are global, as in MediaPipe's
registry; registering a taken name under a different class is refused.

A module file is imported once per process, like any Python module: graphs listing the same
file share its classes (importing it again would make new classes under taken names).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import itertools
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

# The graph package's calculators register when their package is imported: importing it here
# makes every lookup see them, whichever module a caller imported first.
from ovmsx.graph import calculator_table
from ovmsx.graph import calculators as _built_in  # noqa: F401
from ovmsx.graph.calculator_table import register_calculator, register_factory
from ovmsx.status import StatusCode, StatusError, status_error

ENTRY_POINT_GROUP = "ovmsx.calculators"
__all__ = ["import_modules", "known_names", "lookup", "register_calculator", "register_factory"]

_module_numbers = itertools.count(1)
# Resolved path of every calculator file imported so far; graphs load in parallel threads.
_imported_files: set[Path] = set()
_import_lock = threading.Lock()


def lookup(name: str) -> Callable | None:
    found = calculator_table._TABLE.get(name)
    if found is None:
        _load_entry_point(name)
        found = calculator_table._TABLE.get(name)
    return found[0] if found else None


def known_names() -> list[str]:
    return sorted(calculator_table._TABLE)


def import_modules(specs: Iterable[str], base_dir: Path, graph: str) -> None:
    """Import each module a graph's config lists: a ``.py`` path (relative to the graph's
    folder) or an importable module name. Their ``@register_calculator`` classes register."""
    for spec in specs:
        try:
            with _import_lock:
                if spec.endswith(".py"):
                    _import_file((base_dir / spec).resolve())  # an absolute spec replaces base_dir
                else:
                    importlib.import_module(spec)
        except StatusError:
            raise
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt | SystemExit):
                raise
            raise status_error(
                StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR,
                f"graph {graph}: calculator module {spec} failed to import: "
                f"{type(error).__name__}: {error}",
            ) from error


def _import_file(path: Path) -> None:
    if path in _imported_files:
        return
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    module_name = f"_ovmsx_calculators_{next(_module_numbers)}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    _imported_files.add(path)


def _load_entry_point(name: str) -> None:
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name != name:
            continue
        try:
            calculator = entry.load()
            if name not in calculator_table._TABLE:
                register_calculator(calculator, name=name)
        except StatusError:
            raise
        except Exception as error:  # an import error, or not a PythonCalculator subclass
            raise status_error(
                StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR,
                f"calculator {name}: entry point {entry.value} failed to load: "
                f"{type(error).__name__}: {error}",
            ) from error
