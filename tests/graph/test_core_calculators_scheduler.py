"""What the scheduler offers the core calculators: forced input stream handlers, bounds a node
moves itself, packets sent from close, slow user code run off the driving thread, and the
default handler waiting while an input may still bring a packet at the timestamp."""

from __future__ import annotations

from core_graphs import Offloaded, Running, plan_of

SLOW_CHAIN = """
input_stream: "in"
output_stream: "out"
output_stream: "quick"
node { calculator: "Slow" input_stream: "IN:in" output_stream: "OUT:out" }
node { calculator: "PassThroughCalculator" input_stream: "in" output_stream: "quick" }
"""


def test_slow_user_code_runs_elsewhere_while_the_instance_goes_on() -> None:
    offload = Offloaded()
    graph = Running(SLOW_CHAIN, offload=offload)
    graph.send("in", 1, 1).send("in", 2, 2)
    # The slow node got 1 and is busy; the rest of the graph went on with 1 and 2.
    assert len(offload.calls) == 1
    assert graph.on("quick") == [(1, 1), (2, 2)]
    assert graph.run.busy
    assert not graph.run.finished
    offload.finish_next(graph.run)  # 1 comes back; 2 goes out to the slow node
    assert graph.on("out") == [(1, 1)]
    assert len(offload.calls) == 1
    graph.run.close_inputs()
    offload.finish_next(graph.run)
    assert graph.on("out") == [(1, 1), (2, 2)]
    assert not graph.run.busy
    assert graph.run.finished


def test_without_offload_slow_user_code_runs_in_line() -> None:
    graph = Running(SLOW_CHAIN).send("in", 1, 1)
    assert graph.on("out") == [(1, 1)]


def test_a_calculator_may_force_its_input_stream_handler() -> None:
    text = """
    input_stream: "frame"
    input_stream: "loop"
    output_stream: "prev"
    node { calculator: "PreviousLoopbackCalculator" input_stream: "MAIN:frame"
           input_stream: "LOOP:loop" output_stream: "PREV_LOOP:prev"
           input_stream_handler { input_stream_handler: "DefaultInputStreamHandler" } }
    """
    (node,) = plan_of(text).nodes
    assert node.policy == "ImmediateInputStreamHandler"


def test_packets_sent_from_close_arrive_before_the_stream_closes() -> None:
    text = """
    input_stream: "in"
    output_stream: "out"
    node { calculator: "SidePacketToStreamCalculator" input_side_packet: "v"
           output_stream: "AT_POSTSTREAM:out" }
    """
    graph = Running(text, {"v": "last word"}).close()
    assert [value for _, value in graph.on("out")] == ["last word"]


def test_a_node_moving_its_own_bounds_keeps_them_below_frames_it_still_holds() -> None:
    # A flow limiter holding frame 2 in its queue must be able to send it later: the
    # scheduler does not move its output past 2 when it runs at 3.
    offload = Offloaded()
    text = """
    input_stream: "in"
    output_stream: "out"
    node { calculator: "FlowLimiterCalculator" input_stream: "in" input_stream: "FINISHED:out"
           input_stream_info { tag_index: "FINISHED" back_edge: true } output_stream: "limited"
           options { [mediapipe.FlowLimiterCalculatorOptions.ext] { max_in_queue: 1 } } }
    node { calculator: "Slow" input_stream: "IN:limited" output_stream: "OUT:out" }
    """
    graph = Running(text, offload=offload).send("in", 1, 1).send("in", 2, 2)
    offload.finish_next(graph.run)
    offload.finish_next(graph.run)
    assert graph.on("out") == [(1, 1), (2, 2)]


def test_the_default_handler_waits_while_an_input_may_still_bring_a_packet() -> None:
    text = """
    input_stream: "a"
    input_stream: "b"
    output_stream: "joined"
    node { calculator: "ConcatenateTensorVectorCalculator" input_stream: "a" input_stream: "b"
           output_stream: "joined" }
    """
    graph = Running(text).send("a", [1], 1).send("b", [2], 2)
    assert graph.on("joined") == [(1, [1])]  # b's next packet is at 2: nothing more at 1
    graph.send("a", [3], 2)  # b had its packet at 2; a could still have brought one
    assert graph.on("joined") == [(1, [1]), (2, [3, 2])]


def test_a_bound_on_an_output_the_node_lacks_fails_the_run() -> None:
    text = """
    input_stream: "in"
    output_stream: "out"
    node { name: "bad" calculator: "BadBound" input_stream: "IN:in" output_stream: "OUT:out" }
    """
    graph = Running(text)
    graph.run.add_packet("in", 1, 1)
    graph.run.drain()
    assert graph.run.error is not None
    assert "the node has no output stream NOPE:0" in graph.run.error.message
