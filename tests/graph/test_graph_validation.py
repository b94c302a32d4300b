"""Graph checks: each kind of broken graph is refused naming the node and the stream."""

from __future__ import annotations

import pytest

from ovmsx.graph.graph_config import GraphConfig, GraphConfigError, parse_graph
from ovmsx.graph.graph_validation import topological_order, validate_graph
from ovmsx.status import StatusCode

KNOWN = {"PythonExecutorCalculator", "PassThrough"}


def node(
    name: str = "",
    *,
    calculator: str = "PassThrough",
    inputs: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
    extra: str = "",
) -> str:
    lines = [f'name: "{name}"'] if name else []
    lines.append(f'calculator: "{calculator}"')
    lines += [f'input_stream: "{s}"' for s in inputs]
    lines += [f'output_stream: "{s}"' for s in outputs]
    if extra:
        lines.append(extra)
    return "node {\n  " + "\n  ".join(lines) + "\n}\n"


def graph(
    *nodes: str, inputs: tuple[str, ...] = ("in",), outputs: tuple[str, ...] = ("out",)
) -> GraphConfig:
    head = "".join(f'input_stream: "{s}"\n' for s in inputs)
    head += "".join(f'output_stream: "{s}"\n' for s in outputs)
    return parse_graph(head + "".join(nodes), "graph.pbtxt")


def problems(config: GraphConfig) -> str:
    with pytest.raises(GraphConfigError) as caught:
        validate_graph(config, KNOWN, "/models/g/graph.pbtxt")
    error = caught.value
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID
    assert str(error).startswith(
        "Failed to read protobuf graph configuration file - /models/g/graph.pbtxt: "
    )
    return str(error)


LOOPBACK_EXTRA = (
    "input_stream_info { tag_index: 'LOOPBACK:0' back_edge: true }\n"
    "input_stream_handler { input_stream_handler: 'SyncSetInputStreamHandler'\n"
    "  options { [mediapipe.SyncSetInputStreamHandlerOptions.ext] {\n"
    "    sync_set { tag_index: 'LOOPBACK:0' } } } }"
)


# -- graphs that pass -----------------------------------------------------------------------


def test_chain_passes_and_orders_nodes() -> None:
    config = graph(
        node("c", inputs=("b",), outputs=("out",)),
        node("a", inputs=("in",), outputs=("a_out",)),
        node("b", inputs=("a_out",), outputs=("b",)),
    )
    validate_graph(config, KNOWN, "g")
    assert topological_order(config) == (1, 2, 0)


def test_ties_keep_file_order() -> None:
    config = graph(
        node("join", inputs=("A:x", "B:y"), outputs=("out",)),
        node("y", inputs=("in",), outputs=("y",)),
        node("x", inputs=("in",), outputs=("x",)),
        node("side", inputs=("in",), outputs=("unused",)),
    )
    validate_graph(config, KNOWN, "g")
    # Among the nodes ready to run, the earliest in the file goes first: "join" is ready once
    # "y" and "x" ran, and precedes "side".
    assert topological_order(config) == (1, 2, 0, 3)


def test_generative_loopback_passes() -> None:
    config = graph(
        node(
            "python_node",
            calculator="PythonExecutorCalculator",
            inputs=("INPUT:in", "LOOPBACK:loopback"),
            outputs=("OUTPUT:out", "LOOPBACK:loopback"),
            extra=LOOPBACK_EXTRA,
        ),
        inputs=("OVMS_PY_TENSOR:in",),
        outputs=("OVMS_PY_TENSOR:out",),
    )
    validate_graph(config, KNOWN, "g")
    assert topological_order(config) == (0,)


def test_cycle_through_a_back_edge_passes() -> None:
    config = graph(
        node(
            "a",
            inputs=("IN:in", "BACK:fed_back"),
            outputs=("mid",),
            extra=("input_stream_info { tag_index: 'BACK' back_edge: true }"),
        ),
        node("b", inputs=("mid",), outputs=("out", "fed_back")),
    )
    validate_graph(config, KNOWN, "g")
    assert topological_order(config) == (0, 1)


def test_graph_output_may_be_a_graph_input() -> None:
    validate_graph(graph(inputs=("a",), outputs=("a",)), KNOWN, "g")


def test_untagged_streams_of_a_node_are_distinct() -> None:
    # MediaPipe numbers untagged streams :0, :1, ... so two of them do not clash.
    config = graph(node("n", inputs=("in", "in2"), outputs=("out",)), inputs=("in", "in2"))
    validate_graph(config, KNOWN, "g")


def test_indexed_tags_pass() -> None:
    config = graph(
        node("n", inputs=("T:0:in", "T:1:in2"), outputs=("out",)),
        inputs=("A:0:in", "A:1:in2"),
    )
    validate_graph(config, KNOWN, "g")


# -- each problem ---------------------------------------------------------------------------


def test_no_graph_input_stream() -> None:
    text = problems(graph(node("n", outputs=("out",)), inputs=()))
    assert "the graph has no input_stream" in text


def test_no_graph_output_stream() -> None:
    text = problems(graph(node("n", inputs=("in",)), outputs=()))
    assert "the graph has no output_stream" in text


def test_graph_inputs_with_the_same_name() -> None:
    config = graph(node("n", inputs=("in",), outputs=("out",)), inputs=("A:in", "B:in"))
    text = problems(config)
    assert 'graph input_streams "A:in" and "B:in" have the same name "in"' in text


def test_graph_outputs_with_the_same_name() -> None:
    config = graph(node("n", inputs=("in",), outputs=("out",)), outputs=("A:out", "B:out"))
    assert 'graph output_streams "A:out" and "B:out" have the same name "out"' in problems(config)


def test_graph_inputs_with_the_same_tag() -> None:
    config = graph(
        node("n", inputs=("A:a", "B:b"), outputs=("out",)),
        inputs=("OVMS_PY_TENSOR:a", "OVMS_PY_TENSOR:b"),
    )
    text = problems(config)
    assert (
        'graph input_streams "OVMS_PY_TENSOR:a" and "OVMS_PY_TENSOR:b" share the tag_index '
        "OVMS_PY_TENSOR:0"
    ) in text


def test_graph_outputs_with_the_same_tag() -> None:
    config = graph(
        node("n", inputs=("in",), outputs=("A:a", "B:b")),
        outputs=("OVMS_PY_TENSOR:a", "OVMS_PY_TENSOR:b"),
    )
    assert 'graph output_streams "OVMS_PY_TENSOR:a" and "OVMS_PY_TENSOR:b" share' in problems(
        config
    )


def test_unknown_calculator() -> None:
    config = graph(node("n", calculator="HttpLLMCalculator", inputs=("in",), outputs=("out",)))
    text = problems(config)
    assert 'node "n": unknown calculator "HttpLLMCalculator"' in text
    assert "PythonExecutorCalculator" in text  # the known ones are listed


def test_missing_calculator() -> None:
    config = graph(node("n", calculator="", inputs=("in",), outputs=("out",)))
    assert 'node "n" has no calculator' in problems(config)


def test_unconnected_input_stream() -> None:
    config = graph(node("n", inputs=("in", "T:nowhere"), outputs=("out",)))
    text = problems(config)
    assert 'node "n": input_stream "T:nowhere" is not produced by any node' in text
    assert "(unconnected stream)" in text


def test_unconnected_input_of_unnamed_node_uses_the_label() -> None:
    config = graph(node(inputs=("in",), outputs=("out",)), node(inputs=("ghost",)))
    assert 'PassThrough (node 2): input_stream "ghost" is not produced' in problems(config)


def test_graph_output_nobody_produces_loads_as_in_ovms() -> None:
    # COMPAT §19: OVMS loads such a graph; a request waiting on that output fails instead.
    config = graph(node("n", inputs=("in",), outputs=("out",)), outputs=("out", "T:missing"))
    validate_graph(config, KNOWN, "graph.pbtxt")


def test_side_packet_produced_twice() -> None:
    config = graph(
        node("a", inputs=("in",), outputs=("out",), extra='output_side_packet: "S:s"\n'),
        node("b", inputs=("in",), outputs=("o2",), extra='output_side_packet: "S:s"\n'),
    )
    assert 'side packet "s" is produced more than once: by node "a" and node "b"' in problems(
        config
    )


def test_side_packet_reader_runs_after_its_producer() -> None:
    config = graph(
        node("reader", inputs=("in",), outputs=("out",), extra='input_side_packet: "S:s"\n'),
        node("maker", extra='output_side_packet: "S:s"\n'),
    )
    assert [config.nodes[i].name for i in topological_order(config)] == ["maker", "reader"]


def test_stream_produced_by_two_nodes() -> None:
    config = graph(
        node("a", inputs=("in",), outputs=("out",)),
        node("b", inputs=("in",), outputs=("out",)),
    )
    text = problems(config)
    assert 'stream "out" is produced more than once (duplicate output)' in text
    assert 'by node "a" and node "b"' in text


def test_stream_produced_by_a_node_and_a_graph_input() -> None:
    config = graph(node("a", inputs=("in",), outputs=("in", "T:out")))
    text = problems(config)
    assert (
        'stream "in" is produced more than once (duplicate output): by graph input_stream and '
        'node "a"'
    ) in text


def test_stream_produced_twice_by_one_node() -> None:
    config = graph(node("a", inputs=("in",), outputs=("A:out", "B:out")))
    assert (
        'stream "out" is produced more than once (duplicate output): by node "a" and node "a"'
        in (problems(config))
    )


def test_duplicate_node_names() -> None:
    config = graph(
        node("twin", inputs=("in",), outputs=("mid",)),
        node("twin", inputs=("mid",), outputs=("out",)),
    )
    assert '2 nodes have the name "twin"' in problems(config)


def test_unnamed_nodes_may_repeat() -> None:
    config = graph(node(inputs=("in",), outputs=("mid",)), node(inputs=("mid",), outputs=("out",)))
    validate_graph(config, KNOWN, "g")


def test_cycle_without_back_edge_lists_its_nodes() -> None:
    config = graph(
        node("entry", inputs=("in",), outputs=("e",)),
        node("a", inputs=("A:e", "B:c"), outputs=("a",)),
        node("b", inputs=("a",), outputs=("b",)),
        node("c", inputs=("b",), outputs=("c", "out")),
    )
    text = problems(config)
    assert 'cycle without a back edge: node "a" -> node "b" -> node "c" -> node "a"' in text
    assert "entry" not in text
    with pytest.raises(GraphConfigError, match="cycle without a back edge") as caught:
        topological_order(config, "graph.pbtxt")
    assert "graph.pbtxt: " in str(caught.value)


def test_self_loop_without_back_edge() -> None:
    config = graph(
        node(
            "gen",
            calculator="PythonExecutorCalculator",
            inputs=("INPUT:in", "LOOPBACK:loopback"),
            outputs=("OUTPUT:out", "LOOPBACK:loopback"),
        )
    )
    assert 'cycle without a back edge: node "gen" -> node "gen"' in problems(config)


def test_back_edge_on_the_wrong_input_does_not_break_the_cycle() -> None:
    config = graph(
        node(
            "a",
            inputs=("IN:in", "BACK:fed_back"),
            outputs=("mid",),
            extra=("input_stream_info { tag_index: 'IN' back_edge: true }"),
        ),
        node("b", inputs=("mid",), outputs=("out", "fed_back")),
    )
    assert 'cycle without a back edge: node "a" -> node "b" -> node "a"' in problems(config)


def test_back_edge_naming_no_input() -> None:
    config = graph(
        node(
            "n",
            inputs=("in",),
            outputs=("out",),
            extra=("input_stream_info { tag_index: 'LOOPBACK:0' back_edge: true }"),
        )
    )
    text = problems(config)
    assert (
        'node "n": input_stream_info names tag_index LOOPBACK:0, which is no input_stream' in text
    )


def test_sync_set_naming_no_input() -> None:
    config = graph(
        node(
            "n",
            inputs=("INPUT:in",),
            outputs=("out",),
            extra=(
                "input_stream_handler { input_stream_handler: 'SyncSetInputStreamHandler'\n"
                "  options { [mediapipe.SyncSetInputStreamHandlerOptions.ext] {\n"
                "    sync_set { tag_index: 'INPUT' tag_index: 'LOOPBACK' } } } }"
            ),
        )
    )
    text = problems(config)
    assert 'node "n": sync_set names tag_index LOOPBACK:0, which is no input_stream' in text
    assert "INPUT:0" not in text


def test_tag_index_in_two_sync_sets() -> None:
    config = graph(
        node(
            "n",
            inputs=("A:in",),
            outputs=("out",),
            extra=(
                "input_stream_handler { input_stream_handler: 'SyncSetInputStreamHandler'\n"
                "  options { [mediapipe.SyncSetInputStreamHandlerOptions.ext] {\n"
                "    sync_set { tag_index: 'A' } sync_set { tag_index: 'A:0' } } } }"
            ),
        )
    )
    assert 'node "n": tag_index A:0 is in more than one sync_set' in problems(config)


def test_two_inputs_of_a_node_sharing_a_tag() -> None:
    config = graph(
        node("n", inputs=("INPUT:in", "INPUT:in2"), outputs=("out",)), inputs=("in", "in2")
    )
    text = problems(config)
    assert 'node "n": input_streams "INPUT:in" and "INPUT:in2" share the tag_index INPUT:0' in text


def test_two_outputs_of_a_node_sharing_a_tag_index() -> None:
    config = graph(node("n", inputs=("in",), outputs=("OUTPUT:0:out", "OUTPUT:other")))
    text = problems(config)
    assert 'node "n": output_streams "OUTPUT:out" and "OUTPUT:other" share the tag_index' in text


def test_tag_indexes_with_a_gap() -> None:
    config = graph(node("n", inputs=("T:0:in", "T:2:in2"), outputs=("out",)), inputs=("in", "in2"))
    text = problems(config)
    assert 'node "n": input_stream tag "T" has indexes 0, 2: they must run from 0 without gaps' in (
        text
    )


def test_every_problem_is_listed() -> None:
    config = graph(
        node("a", calculator="Nope", inputs=("ghost",), outputs=("out",)),
        node("a", inputs=("in",), outputs=("out",)),
    )
    text = problems(config)
    for part in ('unknown calculator "Nope"', '"ghost"', "duplicate output", 'the name "a"'):
        assert part in text
