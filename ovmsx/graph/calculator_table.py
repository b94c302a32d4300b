"""The one table of calculator names, which every room registers into where it defines its
calculators (the graph package's own in calculators/, generative AI's in ovmsx/genai); lookups
go through calculator_registry.py."""

from __future__ import annotations

from collections.abc import Callable

from ovmsx.graph.python_calculator import PythonCalculator, factory_for
from ovmsx.status import StatusCode, status_error

# name -> (node factory, where it came from)
_TABLE: dict[str, tuple[Callable, object]] = {}


def register_factory(name: str, factory: Callable, origin: object) -> None:
    """Register a node factory ``(node, load) -> CalculatorNode`` under ``name``."""
    known = _TABLE.get(name)
    if known is not None and known[1] is not origin:
        raise status_error(
            StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR,
            f"calculator {name} is registered twice ({_describe(known[1])} and "
            f"{_describe(origin)})",
        )
    _TABLE[name] = (factory, origin)


def register_calculator(calculator=None, *, name: str | None = None):
    """Class decorator: ``@register_calculator`` or ``@register_calculator(name="X")``."""

    def register(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, PythonCalculator)):
            raise TypeError("register_calculator takes a subclass of PythonCalculator")
        register_factory(name or cls.__name__, factory_for(cls), cls)
        return cls

    return register(calculator) if calculator is not None else register


def _describe(origin: object) -> str:
    if isinstance(origin, type):
        return f"{origin.__module__}.{origin.__qualname__}"
    return str(origin)
