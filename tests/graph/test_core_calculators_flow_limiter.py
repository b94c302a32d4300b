"""FlowLimiterCalculator in process: what it lets through, queues and drops, by its options.

The limited node is ``Slow`` (user code as the scheduler sees it): its calls are handed to the
run's ``offload`` and come back only when the test says, as a slow Python node's do in a
stream. No threads, no clocks: every outcome follows from the order of the test's steps.
"""

from __future__ import annotations

import pytest
from core_graphs import Offloaded, Running, load_error, unary

from ovmsx.status import StatusCode


def limited(options: str = "", side_packet: str = "", aux: bool = False) -> str:
    return f"""
input_stream: "in"
{'input_stream: "aux"' if aux else ""}
output_stream: "out"
output_stream: "allowed"
{'output_stream: "aux_out"' if aux else ""}
node {{
  calculator: "FlowLimiterCalculator"
  input_stream: "in"
  {'input_stream: "aux"' if aux else ""}
  input_stream: "FINISHED:out"
  input_stream_info {{ tag_index: "FINISHED" back_edge: true }}
  {side_packet}
  output_stream: "limited"
  {'output_stream: "aux_out"' if aux else ""}
  output_stream: "ALLOW:allowed"
  options {{ [mediapipe.FlowLimiterCalculatorOptions.ext] {{ {options} }} }}
}}
node {{ calculator: "Slow" input_stream: "IN:limited" output_stream: "OUT:out" }}
"""


def test_a_burst_behind_a_slow_node_keeps_the_newest_queued_and_drops_the_rest() -> None:
    offload = Offloaded()
    graph = Running(limited("max_in_flight: 1 max_in_queue: 2"), offload=offload)
    for stamp in range(1, 7):
        graph.send("in", f"frame {stamp}", stamp)
    # 1 went in; 2..6 queued, the queue kept to two by dropping the oldest.
    assert graph.on("allowed") == [(1, True), (2, False), (3, False), (4, False)]
    assert len(offload.calls) == 1
    offload.finish_next(graph.run)  # 1 finished: 5 goes
    offload.finish_next(graph.run)  # 5 finished: 6 goes
    offload.finish_next(graph.run)
    assert graph.on("out") == [(1, "frame 1"), (5, "frame 5"), (6, "frame 6")]
    assert graph.on("allowed")[4:] == [(5, True), (6, True)]
    graph.close()
    assert graph.run.finished


def test_the_default_options_drop_whatever_arrives_while_one_frame_is_in_flight() -> None:
    offload = Offloaded()
    graph = Running(limited(), offload=offload)
    for stamp in (10, 20, 30):
        graph.send("in", stamp, stamp)
    assert graph.on("allowed") == [(10, True), (20, False), (30, False)]
    offload.finish_next(graph.run)
    graph.send("in", 40, 40)  # nothing in flight any more: it goes
    offload.finish_next(graph.run)
    assert graph.on("out") == [(10, 10), (40, 40)]
    assert graph.on("allowed")[-1] == (40, True)


def test_max_in_flight_lets_that_many_frames_run_at_once() -> None:
    offload = Offloaded()
    graph = Running(limited("max_in_flight: 2"), offload=offload)
    for stamp in (1, 2, 3):
        graph.send("in", stamp, stamp)
    # The slow node runs one call at a time: 2 waits at its input, in flight all the same.
    assert graph.on("allowed") == [(1, True), (2, True), (3, False)]
    offload.finish_next(graph.run)
    offload.finish_next(graph.run)
    assert graph.on("out") == [(1, 1), (2, 2)]


def test_the_max_in_flight_side_packet_overrides_the_option() -> None:
    offload = Offloaded()
    text = limited("max_in_flight: 1", 'input_side_packet: "MAX_IN_FLIGHT:most"')
    graph = Running(text, {"most": 3}, offload=offload)
    for stamp in (1, 2, 3, 4):
        graph.send("in", stamp, stamp)
    assert graph.on("allowed") == [(1, True), (2, True), (3, True), (4, False)]


def test_a_frame_in_flight_too_long_in_stream_time_is_given_up() -> None:
    offload = Offloaded()
    graph = Running(limited("in_flight_timeout: 100"), offload=offload)
    graph.send("in", "a", 0)
    graph.send("in", "b", 100)  # 100 after the frame in flight: not over the timeout
    graph.send("in", "c", 101)  # 101 after it: the frame at 0 no longer counts
    assert graph.on("allowed") == [(0, True), (100, False), (101, True)]


def test_a_zero_timeout_waits_for_ever() -> None:
    offload = Offloaded()
    graph = Running(limited("in_flight_timeout: 0"), offload=offload)
    graph.send("in", "a", 0)
    graph.send("in", "b", 10**12)
    assert graph.on("allowed") == [(0, True), (10**12, False)]


def test_auxiliary_streams_pass_only_with_the_frames_let_through() -> None:
    offload = Offloaded()
    graph = Running(limited(aux=True), offload=offload)
    for stamp in (1, 2):
        graph.run.add_packet("in", f"in {stamp}", stamp)
        graph.run.add_packet("aux", f"aux {stamp}", stamp)
        graph.run.drain()
    assert graph.on("allowed") == [(1, True), (2, False)]
    assert graph.on("aux_out") == [(1, "aux 1")]


def test_without_a_slow_part_nothing_is_dropped() -> None:
    # The limited node answers within the call (no offload): each frame is finished before
    # the next one arrives.
    graph = Running(limited())
    for stamp in (1, 2, 3):
        graph.send("in", stamp, stamp)
    assert graph.on("out") == [(1, 1), (2, 2), (3, 3)]
    assert graph.on("allowed") == [(1, True), (2, True), (3, True)]


def test_a_unary_request_always_goes_through() -> None:
    outputs, one_pass = unary(limited(), {"in": "only"}, timestamp=5)
    assert outputs == {"out": "only", "allowed": True}
    assert not one_pass  # a back edge: the general scheduler runs it


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('input_stream: "FINISHED:out"\n  input_stream_info { tag_index: "FINISHED" back_edge: '
          'true }', ""), 'it needs the "FINISHED" input_stream'),
        (('output_stream: "limited"', 'output_stream: "limited" output_stream: "extra"'),
         "each untagged input_stream needs its untagged output_stream"),
        (('output_stream: "ALLOW:allowed"', 'output_stream: "DENY:allowed"'),
         'has tag "DENY", which the calculator does not take'),
        (('input_stream: "FINISHED:out"',
          'input_stream: "FINISHED:out" input_stream: "OPTIONS:in"'),
         "the OPTIONS input_stream is not supported"),
    ],
)  # fmt: skip
def test_a_wrong_node_fails_to_load_naming_it(change: tuple[str, str], message: str) -> None:
    text = limited().replace('calculator: "FlowLimiterCalculator"',
                             'name: "limiter" calculator: "FlowLimiterCalculator"')  # fmt: skip
    error = load_error(text.replace(*change))
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert "node limiter (FlowLimiterCalculator)" in error.message
    assert message in error.message


def test_finished_must_be_a_back_edge() -> None:
    text = limited().replace('input_stream_info { tag_index: "FINISHED" back_edge: true }', "")
    error = load_error(text)
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID
    assert "cycle without a back edge" in error.message
