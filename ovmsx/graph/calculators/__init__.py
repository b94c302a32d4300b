"""The built-in calculators, registered by their ``calculator:`` names."""

from __future__ import annotations

from ovmsx.graph.calculator_registry import register_factory
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


# Generative AI is a room of its own (ovmsx/genai), imported when a graph names it.
def _llm_node(node, load):
    from ovmsx.genai.llm_node import LLMNode

    return LLMNode(node, load)


def _embeddings_node(node, load):
    from ovmsx.genai.embeddings_node import EmbeddingsNode

    return EmbeddingsNode(node, load)


def _rerank_node(node, load):
    from ovmsx.genai.rerank_node import RerankNode

    return RerankNode(node, load)


# MediaPipe's general-purpose calculators (ovmsx/graph/calculators/core).
BUILT_IN.update(CORE_CALCULATORS)
BUILT_IN["HttpLLMCalculator"] = _llm_node
BUILT_IN["EmbeddingsCalculatorOV"] = _embeddings_node
BUILT_IN["RerankCalculatorOV"] = _rerank_node

for _name, _factory in BUILT_IN.items():
    register_factory(_name, _factory, "ovmsx (built in)")
