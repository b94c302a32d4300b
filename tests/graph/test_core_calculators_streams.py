"""PassThrough, Gate, PacketCloner, SidePacketToStream and PreviousLoopback calculators, run in
process: their options, timestamps and bounds, and the graphs they refuse at load."""

from __future__ import annotations

import pytest
from core_graphs import Running, load_error, unary

from ovmsx.graph.calculators.core.node_checks import POST_STREAM, PRE_STREAM
from ovmsx.status import StatusCode

# -- PassThroughCalculator --------------------------------------------------------------------

PASS_THROUGH = """
input_stream: "a"
input_stream: "IMAGE:b"
output_stream: "x"
output_stream: "y"
node { calculator: "PassThroughCalculator" input_stream: "a" input_stream: "IMAGE:b"
       output_stream: "x" output_stream: "IMAGE:y" }
"""


def test_pass_through_forwards_each_packet_at_its_timestamp() -> None:
    # The default input stream handler: each timestamp runs once no stream can bring more
    # there (the last one once the inputs close).
    graph = Running(PASS_THROUGH).send("a", 1, 10).send("b", 2, 11).send("a", 3, 12).close()
    assert graph.on("x") == [(10, 1), (12, 3)]
    assert graph.on("y") == [(11, 2)]


def test_pass_through_takes_the_one_pass_path_of_unary_requests() -> None:
    outputs, one_pass = unary(PASS_THROUGH, {"a": "A", "b": "B"})
    assert outputs == {"x": "A", "y": "B"}
    assert one_pass


def test_pass_through_forwards_side_packets() -> None:
    text = """
    input_stream: "a"
    output_stream: "x"
    node { calculator: "PassThroughCalculator" input_stream: "a" output_stream: "b"
           input_side_packet: "given" output_side_packet: "copied" }
    node { calculator: "SidePacketToStreamCalculator" input_stream: "TICK:b"
           input_side_packet: "copied" output_stream: "AT_TICK:x" }
    """
    graph = Running(text, {"given": "side value"}).send("a", 0, 7)
    assert graph.on("x") == [(7, "side value")]


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ('input_stream: "a" output_stream: "OUT:x"',
         "Input and output streams to PassThroughCalculator must use matching tags and indexes."),
        ('input_stream: "a" output_stream: "x" input_side_packet: "s" output_side_packet: "T:t"',
         "Input and output side packets to PassThroughCalculator must use matching tags and "
         "indexes."),
    ],
)  # fmt: skip
def test_pass_through_refuses_unmatched_tags(node: str, message: str) -> None:
    text = f"""
    input_stream: "a"
    output_stream: "x"
    node {{ name: "pass" calculator: "PassThroughCalculator" {node} }}
    """
    error = load_error(text)
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert error.message.endswith(f"node pass (PassThroughCalculator): {message}")


# -- GateCalculator ---------------------------------------------------------------------------


def gate(control: str = 'input_stream: "ALLOW:allow"', options: str = "") -> str:
    return f"""
input_stream: "data"
input_stream: "allow"
output_stream: "out"
output_stream: "changes"
node {{
  calculator: "GateCalculator"
  input_stream: "data"
  {control}
  output_stream: "out"
  output_stream: "STATE_CHANGE:changes"
  options {{ [mediapipe.GateCalculatorOptions.ext] {{ {options} }} }}
}}
"""


def test_gate_lets_data_through_while_allow_is_true_and_reports_changes() -> None:
    graph = Running(gate())
    for stamp, allowed in ((1, True), (2, True), (3, False), (4, True)):
        graph.run.add_packet("data", stamp * 10, stamp)
        graph.run.add_packet("allow", allowed, stamp)
    graph.close()
    assert graph.on("out") == [(1, 10), (2, 20), (4, 40)]
    assert graph.on("changes") == [(3, False), (4, True)]  # never for the first decision


def test_gate_disallow_inverts_the_control() -> None:
    graph = Running(gate('input_stream: "DISALLOW:allow"'))
    for stamp, disallowed in ((1, True), (2, False)):
        graph.run.add_packet("data", stamp, stamp)
        graph.run.add_packet("allow", disallowed, stamp)
    graph.close()
    assert graph.on("out") == [(2, 2)]


@pytest.mark.parametrize(("empty_as_allow", "passed"), [(False, []), (True, [(1, "d")])])
def test_gate_treats_a_missing_control_packet_by_option(empty_as_allow: bool, passed) -> None:
    # Data at 1, the control's next packet at 2: at 1 the control is empty.
    graph = Running(gate(options=f"empty_packets_as_allow: {str(empty_as_allow).lower()}"))
    graph.send("data", "d", 1).send("allow", True, 2)
    assert graph.on("out") == passed


@pytest.mark.parametrize(("allow", "passed"), [(True, [(5, "d")]), (False, [])])
def test_gate_control_as_a_side_packet(allow: bool, passed) -> None:
    graph = Running(gate('input_side_packet: "ALLOW:gate_open"'), {"gate_open": allow})
    graph.send("data", "d", 5)
    assert graph.on("out") == passed


@pytest.mark.parametrize(
    ("control", "message"),
    [("yes", "ALLOW:0 got str, not a bool"), ([1, 0], "ALLOW:0 got list, not a bool")],
)
def test_gate_fails_the_run_naming_a_control_packet_that_is_not_a_bool(control, message) -> None:
    graph = Running(gate())
    graph.run.add_packet("data", "d", 1)
    graph.run.add_packet("allow", control, 1)
    graph.run.drain()
    assert graph.run.error is not None
    assert message in graph.run.error.message
    assert graph.on("out") == []


@pytest.mark.parametrize(("allow", "passed"), [(True, [(5, "d")]), (False, [])])
def test_gate_without_control_follows_the_allow_option(allow: bool, passed) -> None:
    graph = Running(gate("", f"allow: {str(allow).lower()}"))
    graph.send("data", "d", 5)
    assert graph.on("out") == passed


@pytest.mark.parametrize(
    ("control", "message"),
    [
        ('input_stream: "ALLOW:allow" input_side_packet: "DISALLOW:s"',
         "only one of ALLOW or DISALLOW may be given"),
        ('input_stream: "ALLOW:allow" input_stream: "more"',
         "Number of data output streams must match with data input streams."),
    ],
)  # fmt: skip
def test_gate_refuses_conflicting_controls_and_unpaired_data(control: str, message: str) -> None:
    more = 'input_stream: "allow"\ninput_stream: "more"'
    text = gate(control).replace('input_stream: "allow"', more)
    error = load_error(text)
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert message in error.message


# -- PacketClonerCalculator -------------------------------------------------------------------


def cloner(options: str = "", tick: str = 'input_stream: "TICK:tick"') -> str:
    return f"""
input_stream: "a"
input_stream: "b"
input_stream: "tick"
output_stream: "a_out"
output_stream: "b_out"
node {{
  calculator: "PacketClonerCalculator"
  input_stream: "a"
  input_stream: "b"
  {tick}
  output_stream: "a_out"
  output_stream: "b_out"
  options {{ [mediapipe.PacketClonerCalculatorOptions.ext] {{ {options} }} }}
}}
"""


def test_cloner_sends_the_latest_packets_at_each_tick() -> None:
    graph = Running(cloner()).send("a", "a1", 1).send("tick", 0, 2).send("b", "b3", 3)
    graph.send("tick", 0, 4).send("a", "a5", 5).send("tick", 0, 5)
    graph.close()
    assert graph.on("a_out") == [(2, "a1"), (4, "a1"), (5, "a5")]
    assert graph.on("b_out") == [(4, "b3"), (5, "b3")]


def test_without_a_tick_tag_the_last_untagged_input_ticks() -> None:
    graph = Running(cloner(tick='input_stream: "tick"')).send("a", "a1", 1).send("b", "b1", 1)
    graph.send("tick", 0, 2).close()
    assert graph.on("a_out") == [(2, "a1")]
    assert graph.on("b_out") == [(2, "b1")]


@pytest.mark.parametrize(
    "option",
    ["output_only_when_all_inputs_received: true",
     "output_packets_only_when_all_inputs_received: true"],
)  # fmt: skip
def test_cloner_waits_for_every_input_when_told(option: str) -> None:
    graph = Running(cloner(option)).send("a", "a1", 1).send("tick", 0, 2)
    assert graph.on("a_out") == []
    graph.send("b", "b3", 3).send("tick", 0, 4).close()
    assert graph.on("a_out") == [(4, "a1")]
    assert graph.on("b_out") == [(4, "b3")]


# A node joining the tick with a cloned output runs at a dropped tick only once the cloner has
# promised nothing will come there.
JOINED = """
node { calculator: "GateCalculator" input_stream: "tick" input_stream: "a_out"
       output_stream: "tick_seen" output_stream: "a_seen"
       options { [mediapipe.GateCalculatorOptions.ext] { allow: true } } }
output_stream: "tick_seen"
"""


@pytest.mark.parametrize(
    ("option", "seen"),
    [("output_only_when_all_inputs_received: true", []),
     ("output_packets_only_when_all_inputs_received: true", [(2, "t")])],
)  # fmt: skip
def test_the_packets_option_moves_bounds_past_a_dropped_tick(option: str, seen: list) -> None:
    graph = Running(cloner(option) + JOINED).send("a", "a1", 1).send("tick", "t", 2)
    graph.send("b", "b3", 3).send("a", "a3", 3)  # nothing more at 2: the tick there is dropped
    assert graph.on("a_out") == []
    assert graph.on("tick_seen") == seen


# -- SidePacketToStreamCalculator -------------------------------------------------------------


def to_stream(tag: str, extra: str = "") -> str:
    tick = 'input_stream: "TICK:tick"' if tag in ("AT_TICK", "AT_FIRST_TICK") else ""
    return f"""
input_stream: "tick"
output_stream: "out"
node {{ calculator: "SidePacketToStreamCalculator" {tick} input_side_packet: "value" {extra}
       output_stream: "{tag}:out" }}
"""


@pytest.mark.parametrize(
    ("tag", "stamp"), [("AT_PRESTREAM", PRE_STREAM), ("AT_POSTSTREAM", POST_STREAM), ("AT_ZERO", 0)]
)
def test_side_packet_sent_once_at_a_fixed_timestamp(tag: str, stamp: int) -> None:
    graph = Running(to_stream(tag), {"value": "v"})
    graph.run.drain()
    assert graph.on("out") == [(stamp, "v")]
    graph.close()
    assert graph.on("out") == [(stamp, "v")]


def test_side_packet_sent_at_the_timestamp_side_packet() -> None:
    graph = Running(to_stream("AT_TIMESTAMP", 'input_side_packet: "TIMESTAMP:when"'),
                    {"value": "v", "when": 1234})  # fmt: skip
    graph.close()
    assert graph.on("out") == [(1234, "v")]


def test_side_packet_sent_at_every_tick_or_the_first_only() -> None:
    every = Running(to_stream("AT_TICK"), {"value": 5}).send("tick", 0, 3).send("tick", 0, 9)
    first = Running(to_stream("AT_FIRST_TICK"), {"value": 5}).send("tick", 0, 3)
    first.send("tick", 0, 9)
    assert every.on("out") == [(3, 5), (9, 5)]
    assert first.on("out") == [(3, 5)]


def test_side_packets_go_to_the_outputs_in_order() -> None:
    text = """
    input_stream: "tick"
    output_stream: "x"
    output_stream: "y"
    node { calculator: "SidePacketToStreamCalculator" input_stream: "TICK:tick"
           input_side_packet: "first" input_side_packet: "second"
           output_stream: "AT_TICK:0:x" output_stream: "AT_TICK:1:y" }
    """
    graph = Running(text, {"first": 1, "second": 2}).send("tick", 0, 4)
    assert (graph.on("x"), graph.on("y")) == ([(4, 1)], [(4, 2)])


def test_a_unary_request_gets_a_side_packet_at_its_tick() -> None:
    outputs, _ = unary(to_stream("AT_TICK"), {"tick": 0}, timestamp=3, sides={"value": "v"})
    assert outputs == {"out": "v"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (to_stream("AT_TICK").replace('output_stream: "AT_TICK:out"',
                                      'output_stream: "AT_TICK:out" output_stream: "AT_ZERO:o"'),
         "Only one of AT_PRESTREAM, AT_POSTSTREAM, AT_ZERO, AT_TICK, AT_FIRST_TICK and "
         "AT_TIMESTAMP tags is allowed and required to specify output stream(s)."),
        (to_stream("AT_ZERO").replace('input_side_packet: "value"',
                                      'input_stream: "TICK:tick" input_side_packet: "value"'),
         "Either both TICK input and tick (AT_TICK/AT_FIRST_TICK) output should be used or none "
         "of them."),
        (to_stream("AT_TIMESTAMP"), "Either both TIMESTAMP input side packet and AT_TIMESTAMP "
         "output should be used or none of them."),
        (to_stream("AT_ZERO", 'input_side_packet: "more"'),
         "Same number of input side packets (2) and output streams (1) is required."),
    ],
)  # fmt: skip
def test_side_packet_to_stream_refuses_wrong_tags(text: str, message: str) -> None:
    error = load_error(text)
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert "(SidePacketToStreamCalculator): " + message in error.message


# -- PreviousLoopbackCalculator ---------------------------------------------------------------

# The classic use: each frame's result paired with the previous frame's.
PREVIOUS = """
input_stream: "frame"
output_stream: "prev"
node {
  calculator: "PreviousLoopbackCalculator"
  input_stream: "MAIN:frame"
  input_stream: "LOOP:result"
  input_stream_info { tag_index: "LOOP" back_edge: true }
  output_stream: "PREV_LOOP:prev"
}
node { calculator: "Slow" input_stream: "IN:frame" output_stream: "OUT:result" }
"""


def test_previous_loopback_hands_each_frame_the_previous_result() -> None:
    graph = Running(PREVIOUS)
    for stamp in (10, 20, 30):
        graph.send("frame", f"f{stamp}", stamp)
    assert graph.on("prev") == [(20, "f10"), (30, "f20")]


def test_previous_loopback_waits_for_a_late_loop_packet() -> None:
    from core_graphs import Offloaded

    offload = Offloaded()
    graph = Running(PREVIOUS, offload=offload)
    graph.send("frame", "a", 1).send("frame", "b", 2)
    assert graph.on("prev") == []  # the result of 1 is not back yet
    offload.finish_next(graph.run)
    assert graph.on("prev") == [(2, "a")]


def test_previous_loopback_gives_only_a_bound_for_a_skipped_loop_timestamp() -> None:
    # LOOP has nothing at 1: PREV_LOOP at 2 gets no packet, but a node joining it with MAIN
    # still runs at 2 once LOOP's next packet shows 1 was skipped.
    text = """
    input_stream: "frame"
    input_stream: "loop"
    output_stream: "joined"
    node { calculator: "PreviousLoopbackCalculator" input_stream: "MAIN:frame"
           input_stream: "LOOP:loop" output_stream: "PREV_LOOP:prev" }
    node { calculator: "PassThroughCalculator" input_stream: "frame" input_stream: "prev"
           output_stream: "joined" output_stream: "prev_seen" }
    """
    graph = Running(text).send("frame", "a", 1).send("frame", "b", 2).send("loop", "late", 3)
    assert graph.on("joined") == [(1, "a"), (2, "b")]


def test_previous_loopback_refuses_missing_tags() -> None:
    error = load_error(PREVIOUS.replace('output_stream: "PREV_LOOP:prev"', 'output_stream: "x"'))
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert "PreviousLoopbackCalculator" in error.message
