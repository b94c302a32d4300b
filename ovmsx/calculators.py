"""Write graph calculators in Python: ``from ovmsx.calculators import PythonCalculator``.

See docs/graphs.md ("Python calculators") for the contract.
"""

from ovmsx.graph.calculator import CalculatorContext, NodeFailure
from ovmsx.graph.calculator_registry import register_calculator
from ovmsx.graph.image_frame import ImageFrame
from ovmsx.graph.python_calculator import PythonCalculator

__all__ = [
    "CalculatorContext",
    "ImageFrame",
    "NodeFailure",
    "PythonCalculator",
    "register_calculator",
]
