"""The graph package's own calculators, registered by their ``calculator:`` names. Other rooms
register theirs where they define them (generative AI: ovmsx/genai/calculators.py)."""

from __future__ import annotations

from ovmsx.graph.calculator_table import register_factory
from ovmsx.graph.calculators.core import CORE_CALCULATORS
from ovmsx.graph.calculators.openvino_inference import InferenceNode
from ovmsx.graph.calculators.openvino_session import SessionNode
from ovmsx.graph.calculators.pytensor_converter import ConverterNode
from ovmsx.graph.calculators.python_executor import PythonExecutorNode

BUILT_IN = {
    "PythonExecutorCalculator": PythonExecutorNode,
    "PyTensorOvTensorConverterCalculator": ConverterNode,
    "OpenVINOModelServerSessionCalculator": SessionNode,
    "OpenVINOInferenceCalculator": InferenceNode,
}


# MediaPipe's general-purpose calculators (ovmsx/graph/calculators/core).
BUILT_IN.update(CORE_CALCULATORS)

for _name, _factory in BUILT_IN.items():
    register_factory(_name, _factory, "ovmsx (built in)")
