"""The calculators a graph may name, by their ``calculator:`` string."""

from __future__ import annotations

from ovmsx.graph.calculator import CalculatorNode
from ovmsx.graph.calculators.python_executor import PythonExecutorNode

CALCULATORS: dict[str, type[CalculatorNode]] = {
    "PythonExecutorCalculator": PythonExecutorNode,
}
