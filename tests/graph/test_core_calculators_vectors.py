"""ConcatenateVector, SplitVector, BeginLoop and EndLoop calculators over vectors (Python lists)
of Tensors, run in process: options, loop timestamps, and the graphs they refuse at load."""

from __future__ import annotations

import numpy as np
import pytest
from core_graphs import Running, load_error, unary

from ovmsx import _core
from ovmsx.graph.calculators.core.begin_end_loop import BEGIN_LOOP_NAMES, END_LOOP_NAMES
from ovmsx.graph.calculators.core.concatenate_vector import CONCATENATE_NAMES
from ovmsx.graph.calculators.core.split_vector import SPLIT_NAMES
from ovmsx.status import StatusCode


def tensor(name: str, *values: float) -> _core.Tensor:
    return _core.Tensor(name, np.array(values, np.float32))


def names(vector) -> list[str]:
    return [t.name for t in vector]


# -- ConcatenateVectorCalculator --------------------------------------------------------------


def concatenate(options: str = "", calculator: str = "ConcatenateTensorVectorCalculator") -> str:
    return f"""
input_stream: "a"
input_stream: "b"
output_stream: "joined"
node {{ calculator: "{calculator}" input_stream: "a" input_stream: "b" output_stream: "joined"
       options {{ [mediapipe.ConcatenateVectorCalculatorOptions.ext] {{ {options} }} }} }}
"""


@pytest.mark.parametrize("calculator", CONCATENATE_NAMES)
def test_concatenate_joins_vectors_and_single_items_in_input_order(calculator: str) -> None:
    a, b, c = tensor("a", 1), tensor("b", 2), tensor("c", 3)
    outputs, one_pass = unary(concatenate(calculator=calculator), {"b": [b, c], "a": a})
    assert names(outputs["joined"]) == ["a", "b", "c"]
    assert one_pass


def test_concatenate_skips_absent_inputs_unless_told_to_wait_for_all() -> None:
    loose = Running(concatenate()).send("a", [tensor("a", 1)], 1).send("b", [tensor("b")], 2)
    loose.close()
    strict = Running(concatenate("only_emit_if_all_present: true"))
    strict.send("a", [tensor("a", 1)], 1).send("b", [tensor("b")], 2)
    strict.send("a", [tensor("x")], 3).send("b", [tensor("y")], 3)
    assert [(t, names(v)) for t, v in loose.on("joined")] == [(1, ["a"]), (2, ["b"])]
    assert [(t, names(v)) for t, v in strict.on("joined")] == [(3, ["x", "y"])]


def test_concatenate_needs_one_output() -> None:
    text = concatenate().replace('output_stream: "joined"', 'output_stream: "j" output_stream: "k"')
    error = load_error(text.replace('output_stream: "j" output_stream: "k"\nnode',
                                    'output_stream: "joined"\nnode'))  # fmt: skip
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert "it needs exactly one output_stream" in error.message


# -- SplitVectorCalculator --------------------------------------------------------------------


def split(ranges: str, outputs: int = 2, extra: str = "") -> str:
    streams = " ".join(f'output_stream: "o{i}"' for i in range(outputs))
    graph_outputs = "\n".join(f'output_stream: "o{i}"' for i in range(outputs))
    return f"""
input_stream: "v"
{graph_outputs}
node {{ name: "split" calculator: "SplitTensorVectorCalculator" input_stream: "v" {streams}
       options {{ [mediapipe.SplitVectorCalculatorOptions.ext] {{ {ranges} {extra} }} }} }}
"""


FOUR = [tensor(name) for name in "abcd"]


def test_split_sends_each_range_on_its_output() -> None:
    outputs, _ = unary(split("ranges { begin: 0 end: 1 } ranges { begin: 1 end: 4 }"), {"v": FOUR})
    assert names(outputs["o0"]) == ["a"]
    assert names(outputs["o1"]) == ["b", "c", "d"]


def test_split_element_only_sends_the_elements_themselves() -> None:
    ranges = "ranges { begin: 3 end: 4 } ranges { begin: 0 end: 1 }"
    text = split(ranges, extra="element_only: true")
    outputs, _ = unary(text, {"v": FOUR})
    assert (outputs["o0"].name, outputs["o1"].name) == ("d", "a")


def test_split_combine_outputs_joins_the_ranges_on_one_output() -> None:
    ranges = "ranges { begin: 2 end: 4 } ranges { begin: 0 end: 1 }"
    text = split(ranges, 1, "combine_outputs: true")
    outputs, _ = unary(text, {"v": FOUR})
    assert names(outputs["o0"]) == ["c", "d", "a"]


def test_split_fails_the_request_for_a_short_vector() -> None:
    graph = Running(split("ranges { begin: 0 end: 1 } ranges { begin: 1 end: 9 }"))
    graph.run.add_packet("v", FOUR, 1)
    graph.run.drain()
    assert graph.run.error is not None
    assert graph.run.error.code is StatusCode.MEDIAPIPE_EXECUTION_ERROR
    assert "the input vector has 4 elements; the ranges need 9" in graph.run.error.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (split("ranges { begin: 0 end: 1 }"),
         "The number of output streams should match the number of ranges specified in the "
         "CalculatorOptions."),
        (split("ranges { begin: 2 end: 1 } ranges { begin: 0 end: 1 }"),
         "Indices should be non-negative and begin index should be less than the end index."),
        (split("ranges { begin: 0 end: 2 } ranges { begin: 2 end: 3 }", extra="element_only: true"),
         "Since element_only is true, all ranges should be of size 1."),
        (split("ranges { begin: 0 end: 2 } ranges { begin: 1 end: 3 }", 1, "combine_outputs: true"),
         "Ranges must be non-overlapping when using combine_outputs option."),
    ],
)  # fmt: skip
def test_split_refuses_ranges_mediapipe_refuses(text: str, message: str) -> None:
    error = load_error(text)
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert error.message.endswith(f"node split (SplitTensorVectorCalculator): {message}")


@pytest.mark.parametrize("calculator", SPLIT_NAMES)
def test_every_split_name_is_the_same_calculator(calculator: str) -> None:
    text = split("ranges { begin: 0 end: 1 }", 1).replace("SplitTensorVectorCalculator", calculator)
    outputs, _ = unary(text, {"v": [1.0, 2.0]})
    assert outputs["o0"] == [1.0]


# -- BeginLoopCalculator / EndLoopCalculator --------------------------------------------------


def loop(begin: str = "BeginLoopTensorCalculator", end: str = "EndLoopTensorCalculator") -> str:
    return f"""
input_stream: "vector"
input_stream: "scale"
output_stream: "results"
node {{ calculator: "{begin}" input_stream: "ITERABLE:vector" input_stream: "CLONE:scale"
       output_stream: "ITEM:item" output_stream: "CLONE:item_scale"
       output_stream: "BATCH_END:batch_end" }}
node {{ calculator: "PassThroughCalculator" input_stream: "item" input_stream: "item_scale"
       output_stream: "body_item" output_stream: "body_scale" }}
node {{ calculator: "Concatenate" input_stream: "body_item" input_stream: "body_scale"
       output_stream: "pair" }}
node {{ calculator: "{end}" input_stream: "ITEM:pair" input_stream: "BATCH_END:batch_end"
       output_stream: "ITERABLE:results" }}
""".replace('"Concatenate"', '"ConcatenateTensorVectorCalculator"')


def test_a_loop_runs_its_body_once_per_element_and_collects_at_the_outer_timestamp() -> None:
    graph = Running(loop())
    graph.run.add_packet("vector", [tensor("x"), tensor("y")], 100)
    graph.run.add_packet("scale", "s100", 100)
    graph.run.drain()
    graph.run.add_packet("vector", [tensor("z")], 200)
    graph.run.add_packet("scale", "s200", 200)
    graph.close()
    results = graph.on("results")
    assert [stamp for stamp, _ in results] == [100, 200]
    assert [[(p[0].name, p[1]) for p in pairs] for _, pairs in results] == [
        [("x", "s100"), ("y", "s100")],
        [("z", "s200")],
    ]


def test_a_loop_fails_the_run_naming_an_iterable_that_is_not_a_vector() -> None:
    graph = Running(loop())
    graph.run.add_packet("vector", tensor("x"), 100)
    graph.run.add_packet("scale", "s100", 100)
    graph.run.drain()
    assert graph.run.error is not None
    assert "ITERABLE carries Tensor, not a vector (list)" in graph.run.error.message


def test_an_empty_vector_gives_no_packet_but_the_next_batch_goes_on() -> None:
    graph = Running(loop())
    graph.send("vector", [], 100)
    graph.send("vector", [tensor("z")], 200).close()
    assert [(t, [p[0].name for p in v]) for t, v in graph.on("results")] == [(200, ["z"])]


def test_loop_timestamps_count_from_zero_across_batches() -> None:
    also_items = 'output_stream: "results"\noutput_stream: "item"'
    text = loop().replace('output_stream: "results"', also_items)
    graph = Running(text).send("vector", [tensor("a"), tensor("b")], 50)
    graph.send("vector", [], 60).send("vector", [tensor("c")], 70).close()
    assert [(t, v.name) for t, v in graph.on("item")] == [(0, "a"), (1, "b"), (3, "c")]


def test_a_unary_loop_request() -> None:
    outputs, one_pass = unary(loop(), {"vector": [tensor("a"), tensor("b")], "scale": 2}, 7)
    assert [(p[0].name, p[1]) for p in outputs["results"]] == [("a", 2), ("b", 2)]
    assert not one_pass


# Each name once, paired with the other side's Tensor calculator.
LOOP_PAIRS = [(begin, "EndLoopTensorCalculator") for begin in BEGIN_LOOP_NAMES]
LOOP_PAIRS += [("BeginLoopTensorCalculator", end) for end in END_LOOP_NAMES]


@pytest.mark.parametrize(("begin", "end"), LOOP_PAIRS)
def test_every_loop_name_is_the_same_calculator(begin: str, end: str) -> None:
    outputs, _ = unary(loop(begin, end), {"vector": [1.0], "scale": 2})
    assert outputs["results"] == [[1.0, 2]]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('input_stream: "BATCH_END:batch_end"', ""), "Missing BATCH_END tagged input_stream."),
        (('input_stream: "CLONE:scale"', ""), "the CLONE input_streams and output_streams"),
        (('input_stream: "ITERABLE:vector"', 'input_stream: "LIST:vector"'),
         'has tag "LIST", which the calculator does not take'),
    ],
)  # fmt: skip
def test_loops_refuse_wrong_tags(change: tuple[str, str], message: str) -> None:
    error = load_error(loop().replace(*change))
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert message in error.message
