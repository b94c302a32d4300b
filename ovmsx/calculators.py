"""Write graph calculators in Python: ``from ovmsx.calculators import PythonCalculator``.

See docs/graphs.md ("Python calculators") for the contract. ``ModelInferRequest`` and
``ModelInferResponse`` are the KServe messages that REQUEST and RESPONSE streams carry.
"""

from ovmsx.frontend.grpc_predict_v2_pb2 import ModelInferRequest, ModelInferResponse
from ovmsx.graph.calculator import CalculatorContext, NodeFailure
from ovmsx.graph.calculator_registry import register_calculator
from ovmsx.graph.image_frame import ImageFrame
from ovmsx.graph.python_calculator import PythonCalculator

__all__ = [
    "CalculatorContext",
    "ImageFrame",
    "ModelInferRequest",
    "ModelInferResponse",
    "NodeFailure",
    "PythonCalculator",
    "register_calculator",
]
