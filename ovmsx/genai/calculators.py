"""The generative calculators under OVMS's names, registered with the graph package's table by
the server at start (``register``). Each factory imports its task's room only when a graph names
it, so a server without generative graphs never loads them."""

from __future__ import annotations

from ovmsx.graph.calculator_table import register_factory

ORIGIN = "ovmsx.genai (built in)"


def _llm_node(node, load):
    from ovmsx.genai.text_generation.llm_node import LLMNode

    return LLMNode(node, load)


def _embeddings_node(node, load):
    from ovmsx.genai.encoders.embeddings_node import EmbeddingsNode

    return EmbeddingsNode(node, load)


def _rerank_node(node, load):
    from ovmsx.genai.encoders.rerank_node import RerankNode

    return RerankNode(node, load)


FACTORIES = {
    "HttpLLMCalculator": _llm_node,
    "EmbeddingsCalculatorOV": _embeddings_node,
    "RerankCalculatorOV": _rerank_node,
}


def register() -> None:
    """Idempotent: registering a name again under the same origin is allowed."""
    for name, factory in FACTORIES.items():
        register_factory(name, factory, ORIGIN)
