"""Helpers every built-in calculator uses to check its node at load (MediaPipe's GetContract).

A refusal is a ``MEDIAPIPE_GRAPH_INITIALIZATION_ERROR`` naming the node: OVMS refuses such a
graph at load too (the graph is not served, requests get "Mediapipe is not loaded yet").
"""

from __future__ import annotations

from collections.abc import Iterable

from ovmsx.graph.graph_config import NodeConfig, StreamRef
from ovmsx.status import StatusCode, StatusError, status_error


def contract_error(node: NodeConfig, problem: str) -> StatusError:
    return status_error(
        StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR,
        f"node {node.label} ({node.calculator}): {problem}",
    )


def unique_tags(node: NodeConfig, refs: Iterable[StreamRef], side: str) -> None:
    """Calculators that address streams by tag alone cannot tell ``T:0`` from ``T:1``."""
    tags = [ref.tag for ref in refs]
    for tag in sorted({t for t in tags if tags.count(t) > 1}):
        raise contract_error(
            node, f'two {side} streams share the tag "{tag}"; give each stream its own tag'
        )


# Tags of packet types that exist only in TensorFlow builds of OVMS.
TENSORFLOW_PREFIXES = ("TFLITE_TENSOR", "TFTENSOR")


def refuse_tensorflow_tags(node: NodeConfig, refs: Iterable[StreamRef]) -> None:
    for ref in refs:
        for prefix in TENSORFLOW_PREFIXES:
            if ref.tag.startswith(prefix):
                raise status_error(
                    StatusCode.NOT_IMPLEMENTED,
                    f"node {node.label}: tag {ref.tag} ({ref}) carries TensorFlow "
                    f"{'Lite ' if prefix == 'TFLITE_TENSOR' else ''}tensors, which ovmsx does "
                    "not serve; use OVTENSOR or TENSOR tags",
                )
