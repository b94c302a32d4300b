"""MediaPipe's general-purpose ("core") calculators, which OVMS release builds link.

Each module holds one calculator (or a closely related pair) with MediaPipe's contract: its
tags checked at load with MediaPipe's error texts where MediaPipe has one, its options message
(``protos/mediapipe_graph.proto``) and its timestamp behaviour. Packets are whatever ovmsx
streams carry: Tensors, Python lists of them (MediaPipe's ``std::vector<T>``), bools, ints.
``CORE_CALCULATORS`` maps every registered name to its node class; type-specific MediaPipe
names (``BeginLoopTensorCalculator``, ``ConcatenateFloatVectorCalculator`` ...) share one
implementation, since a Python list holds any element type.
"""

from __future__ import annotations

from ovmsx.graph.calculators.core.begin_end_loop import (
    BEGIN_LOOP_NAMES,
    END_LOOP_NAMES,
    BeginLoopNode,
    EndLoopNode,
)
from ovmsx.graph.calculators.core.concatenate_vector import CONCATENATE_NAMES, ConcatenateNode
from ovmsx.graph.calculators.core.flow_limiter import FlowLimiterNode
from ovmsx.graph.calculators.core.gate import GateNode
from ovmsx.graph.calculators.core.packet_cloner import PacketClonerNode
from ovmsx.graph.calculators.core.pass_through import PassThroughNode
from ovmsx.graph.calculators.core.previous_loopback import PreviousLoopbackNode
from ovmsx.graph.calculators.core.side_packet_to_stream import SidePacketToStreamNode
from ovmsx.graph.calculators.core.split_vector import SPLIT_NAMES, SplitNode

CORE_CALCULATORS: dict[str, type] = {
    "PassThroughCalculator": PassThroughNode,
    "FlowLimiterCalculator": FlowLimiterNode,
    "PacketClonerCalculator": PacketClonerNode,
    "GateCalculator": GateNode,
    "SidePacketToStreamCalculator": SidePacketToStreamNode,
    "PreviousLoopbackCalculator": PreviousLoopbackNode,
    **dict.fromkeys(CONCATENATE_NAMES, ConcatenateNode),
    **dict.fromkeys(SPLIT_NAMES, SplitNode),
    **dict.fromkeys(BEGIN_LOOP_NAMES, BeginLoopNode),
    **dict.fromkeys(END_LOOP_NAMES, EndLoopNode),
}
