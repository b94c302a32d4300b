"""Load-time checks the core calculators share (their GetContract), and small value helpers.

A refusal is ``contract_error``: MEDIAPIPE_GRAPH_INITIALIZATION_ERROR naming the node and
calculator, the way OVMS refuses a graph whose calculator's contract fails.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ovmsx import _core
from ovmsx.graph.calculator import NodeFailure
from ovmsx.graph.contract import contract_error
from ovmsx.graph.graph_config import NodeConfig, StreamRef
from ovmsx.graph.packet import MAX_TIMESTAMP, MIN_TIMESTAMP

# MediaPipe's special timestamps (mediapipe/framework/timestamp.h), in ovmsx's int scale:
# PreStream is just below the first packet timestamp, PostStream just above the last.
PRE_STREAM = MIN_TIMESTAMP - 1
POST_STREAM = MAX_TIMESTAMP + 1


def untagged(refs: Iterable[StreamRef]) -> list[StreamRef]:
    """The untagged streams of a list, by index (MediaPipe's ``Inputs().Get("", i)``)."""
    return sorted((ref for ref in refs if not ref.tag), key=lambda ref: ref.index)


def tagged(refs: Iterable[StreamRef], tag: str) -> list[StreamRef]:
    return sorted((ref for ref in refs if ref.tag == tag), key=lambda ref: ref.index)


def allow_only(node: NodeConfig, refs: Iterable[StreamRef], tags: Iterable[str], what: str) -> None:
    """Refuse a tag the calculator does not know ("" is the untagged streams)."""
    known = set(tags)
    for ref in refs:
        if ref.tag not in known:
            shown = ", ".join(sorted(f'"{tag}"' if tag else "untagged" for tag in known)) or "none"
            raise contract_error(
                node,
                f'{what} "{ref}" has tag "{ref.tag}", which the calculator does not take '
                f"(it takes {shown})",
            )


def untagged_only(node: NodeConfig) -> None:
    """Refuse any tagged input or output stream (vector calculators take untagged ones only)."""
    allow_only(node, node.inputs, ("",), "input_stream")
    allow_only(node, node.outputs, ("",), "output_stream")


def options(node: NodeConfig, message_class: type):
    """The node's options of ``message_class``, or the defaults when it gives none."""
    found = node.options.get(message_class.DESCRIPTOR.full_name)
    return found if found is not None else message_class()


def truth(value: object, what: str) -> bool:
    """A control packet as a bool: MediaPipe sends bools; a one-element Tensor (what Python
    nodes produce) counts as its element."""
    if isinstance(value, bool | int | np.bool_ | np.integer):
        return bool(value)
    if isinstance(value, _core.Tensor):
        flat = np.asarray(value).reshape(-1)
        if flat.size == 1:
            return bool(flat[0])
        raise NodeFailure(f"{what} got a Tensor of {flat.size} elements, not one bool")
    raise NodeFailure(f"{what} got {type(value).__name__}, not a bool")
