"""Loading a Python node's handler script: import it, make ``OvmsPythonModel()``, initialize it.

Each node imports its script as a module of its own, under a unique name, so two scripts with
the same file name in different folders both load (OVMS imports by file name, and the second
one silently reuses the first). The script's folder is added to ``sys.path`` as in OVMS, so a
handler can import modules that sit next to it.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import sys
from pathlib import Path

from ovmsx.status import StatusCode, StatusError, status_error

_module_numbers = itertools.count(1)


def _failure(node_name: str, path: Path, problem: str) -> StatusError:
    return status_error(
        StatusCode.PYTHON_NODE_FILE_STATE_INITIALIZATION_FAILED,
        f"node {node_name}: {path}: {problem}",
    )


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def import_handler(path: Path, node_name: str) -> type:
    """The ``OvmsPythonModel`` class of the script at ``path``."""
    module_name = f"_ovmsx_handler_{next(_module_numbers)}_{path.stem}"
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.append(folder)
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError("not a Python source file")
        module = importlib.util.module_from_spec(spec)
        # Registered before running, so the script's own classes (dataclasses, pickling)
        # can find their module while it executes.
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except BaseException as error:
        sys.modules.pop(module_name, None)
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        raise _failure(node_name, path, f"import failed: {_describe(error)}") from error
    model_class = getattr(module, "OvmsPythonModel", None)
    if not isinstance(model_class, type):
        raise _failure(node_name, path, "the script defines no class OvmsPythonModel")
    if not callable(getattr(model_class, "execute", None)):
        raise _failure(node_name, path, "OvmsPythonModel has no execute method")
    return model_class


def create_model(model_class: type, path: Path, node_name: str, arguments: dict) -> object:
    """``OvmsPythonModel()``, then ``initialize(arguments)`` if it has one."""
    try:
        model = model_class()
        initialize = getattr(model, "initialize", None)
        if initialize is not None:
            initialize(arguments)  # its return value is ignored, as in OVMS
    except Exception as error:
        raise _failure(node_name, path, f"initialize failed: {_describe(error)}") from error
    return model


def takes_graph_state(model: object) -> bool:
    """True when ``execute(self, inputs, graph_state)`` wants a per-instance state dict."""
    try:
        parameters = inspect.signature(model.execute).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: call it the OVMS way
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) >= 2
