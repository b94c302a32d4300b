"""Reading graph.pbtxt: stream spellings, the documented OVMS graphs, options, parse errors."""

from __future__ import annotations

import pytest

from ovmsx.graph import mediapipe_graph_pb2 as pb
from ovmsx.graph.graph_config import (
    GraphConfig,
    GraphConfigError,
    StreamRef,
    parse_graph,
    parse_stream,
    parse_tag_index,
)
from ovmsx.status import StatusCode, StatusError

PYTHON_OPTIONS = "mediapipe.PythonExecutorCalculatorOptions"

# The three-node increment chain of OVMS's Python guide, as its docs write the Any URL.
INCREMENT_CHAIN = """
input_stream: "OVMS_PY_TENSOR:first_number"
output_stream: "OVMS_PY_TENSOR:last_number"

node {
  name: "first_python_node"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT:first_number"
  output_stream: "OUTPUT:second_number"
  node_options: {
    [type.googleapis.com / mediapipe.PythonExecutorCalculatorOptions]: {
      handler_path: "/ovms/workspace/increment.py"
    }
  }
}

node {
  name: "second_python_node"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT:second_number"
  output_stream: "OUTPUT:third_number"
  node_options: {
    [type.googleapis.com / mediapipe.PythonExecutorCalculatorOptions]: {
      handler_path: "/ovms/workspace/increment.py"
    }
  }
}

node {
  name: "third_python_node"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT:third_number"
  output_stream: "OUTPUT:last_number"
  node_options: {
    [type.googleapis.com / mediapipe.PythonExecutorCalculatorOptions]: {
      handler_path: "/ovms/workspace/increment.py"
    }
  }
}
"""

# Generative mode: LOOPBACK, a back edge and a sync set (older `options` extension form).
GENERATIVE = """
# OVMS_GRAPH_QUEUE_MAX_SIZE: 0
input_stream: "OVMS_PY_TENSOR:input"
output_stream: "OVMS_PY_TENSOR:output"
node {
  name: "python_node"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT:input"
  input_stream: "LOOPBACK:loopback"
  input_stream_info: {
    tag_index: 'LOOPBACK:0',
    back_edge: true
  }
  input_stream_handler {
    input_stream_handler: "SyncSetInputStreamHandler",
    options {
      [mediapipe.SyncSetInputStreamHandlerOptions.ext] {
        sync_set {
          tag_index: "LOOPBACK:0"
        }
      }
    }
  }
  output_stream: "OUTPUT:output"
  output_stream: "LOOPBACK:loopback"
  node_options: {
    [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: {
      handler_path: "/ovms/workspace/generate.py"
    }
  }
}
"""

# Incomplete inputs: ImmediateInputStreamHandler, no options on the handler.
IMMEDIATE = """
input_stream: "OVMS_PY_TENSOR_LABELS:labels"
input_stream: "OVMS_PY_TENSOR_IMAGE:image"
output_stream: "OVMS_PY_TENSOR:result"
node {
  name: "python_node"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT1:labels"
  input_stream: "INPUT2:image"
  input_stream_handler {
    input_stream_handler: "ImmediateInputStreamHandler",
  }
  output_stream: "OUTPUT:result"
  node_options: {
    [type.googleapis.com / mediapipe.PythonExecutorCalculatorOptions]: {
      handler_path: "/ovms/workspace/model.py"
    }
  }
}
"""


def graph_error(text: str, source: str = "graph.pbtxt") -> GraphConfigError:
    with pytest.raises(GraphConfigError) as caught:
        parse_graph(text, source)
    return caught.value


def one_node(body: str) -> str:
    return f'input_stream: "in"\noutput_stream: "out"\nnode {{\n{body}\n}}\n'


# -- streams --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name", StreamRef("", 0, "name")),
        ("_x9", StreamRef("", 0, "_x9")),
        ("TAG:name", StreamRef("TAG", 0, "name")),
        ("OVMS_PY_TENSOR1:a_b", StreamRef("OVMS_PY_TENSOR1", 0, "a_b")),
        ("VIDEO:2:name_b", StreamRef("VIDEO", 2, "name_b")),
        ("_T:0:n", StreamRef("_T", 0, "n")),
    ],
)
def test_stream_forms(text: str, expected: StreamRef) -> None:
    assert parse_stream(text) == expected


def test_stream_tag_index_and_text() -> None:
    assert parse_stream("LOOPBACK:loopback").tag_index == "LOOPBACK:0"
    assert parse_stream("VIDEO:2:v").tag_index == "VIDEO:2"
    assert parse_stream("plain").tag_index == ":0"
    assert [str(parse_stream(s)) for s in ("a", "T:a", "T:0:a", "T:3:a")] == [
        "a",
        "T:a",
        "T:a",
        "T:3:a",
    ]


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "name ''"),
        ("TAG:", "name ''"),
        (":name", "tag ''"),
        ("Tag:name", "tag 'Tag'"),
        ("1TAG:name", "tag '1TAG'"),
        ("TAG:Name", "name 'Name'"),
        ("9lives", "name '9lives'"),
        ("with-dash", "name 'with-dash'"),
        ("TAG:x:name", "index 'x'"),
        ("TAG:01:name", "index '01'"),
        ("TAG:-1:name", "index '-1'"),
        ("A:0:b:c", "too many ':'"),
    ],
)
def test_bad_streams_are_refused_naming_the_string(text: str, complaint: str) -> None:
    with pytest.raises(GraphConfigError) as caught:
        parse_stream(text)
    assert f'"{text}"' in str(caught.value)
    assert complaint in str(caught.value)
    assert caught.value.code is StatusCode.MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("LOOPBACK", "LOOPBACK:0"),
        ("LOOPBACK:0", "LOOPBACK:0"),
        ("VIDEO:2", "VIDEO:2"),
        ("", ":0"),
        (":0", ":0"),
        (":3", ":3"),
    ],
)
def test_tag_index_forms(text: str, normalised: str) -> None:
    assert parse_tag_index(text) == normalised


@pytest.mark.parametrize("text", ["loopback", "TAG:x", "TAG:01", "A:1:2", "TAG:"])
def test_bad_tag_index(text: str) -> None:
    with pytest.raises(GraphConfigError, match=f'tag_index "{text}"'):
        parse_tag_index(text)


def test_untagged_streams_of_one_list_are_numbered_in_order() -> None:
    graph = parse_graph(
        one_node(
            'calculator: "C"\ninput_stream: "a"\ninput_stream: "T:b"\ninput_stream: "c"\n'
            'output_stream: "out"'
        ),
        "g",
    )
    assert graph.nodes[0].inputs == (
        StreamRef("", 0, "a"),
        StreamRef("T", 0, "b"),
        StreamRef("", 1, "c"),
    )
    assert [ref.tag_index for ref in graph.nodes[0].inputs] == [":0", "T:0", ":1"]


# -- the documented graphs ------------------------------------------------------------------


def test_increment_chain() -> None:
    graph = parse_graph(INCREMENT_CHAIN, "graph.pbtxt")
    assert isinstance(graph, GraphConfig)
    assert graph.input_streams == (StreamRef("OVMS_PY_TENSOR", 0, "first_number"),)
    assert graph.output_streams == (StreamRef("OVMS_PY_TENSOR", 0, "last_number"),)
    assert graph.input_side_packets == ()
    assert graph.queue_size_directive is None
    assert [node.name for node in graph.nodes] == [
        "first_python_node",
        "second_python_node",
        "third_python_node",
    ]
    second = graph.nodes[1]
    assert second.calculator == "PythonExecutorCalculator"
    assert second.label == "second_python_node"
    assert second.inputs == (StreamRef("INPUT", 0, "second_number"),)
    assert second.outputs == (StreamRef("OUTPUT", 0, "third_number"),)
    assert second.input_side_packets == (StreamRef("PYTHON_NODE_RESOURCES", 0, "py"),)
    assert second.output_side_packets == ()
    assert second.back_edges == frozenset()
    assert second.input_stream_handler == "DefaultInputStreamHandler"
    assert second.sync_sets == ()
    assert list(second.options) == [PYTHON_OPTIONS]
    options = second.options[PYTHON_OPTIONS]
    assert isinstance(options, pb.PythonExecutorCalculatorOptions)
    assert options.handler_path == "/ovms/workspace/increment.py"


def test_generative_node() -> None:
    graph = parse_graph(GENERATIVE, "graph.pbtxt")
    assert graph.queue_size_directive == "0"
    (node,) = graph.nodes
    assert node.inputs == (StreamRef("INPUT", 0, "input"), StreamRef("LOOPBACK", 0, "loopback"))
    assert node.outputs == (
        StreamRef("OUTPUT", 0, "output"),
        StreamRef("LOOPBACK", 0, "loopback"),
    )
    assert node.back_edges == frozenset({"LOOPBACK:0"})
    assert node.input_stream_handler == "SyncSetInputStreamHandler"
    assert node.sync_sets == (frozenset({"LOOPBACK:0"}),)
    assert node.options[PYTHON_OPTIONS].handler_path == "/ovms/workspace/generate.py"


def test_immediate_input_stream_handler() -> None:
    (node,) = parse_graph(IMMEDIATE, "graph.pbtxt").nodes
    assert node.input_stream_handler == "ImmediateInputStreamHandler"
    assert node.sync_sets == ()
    assert [ref.tag for ref in node.inputs] == ["INPUT1", "INPUT2"]


def test_graph_level_handler_applies_to_nodes_without_their_own() -> None:
    text = (
        'input_stream_handler { input_stream_handler: "ImmediateInputStreamHandler" }\n'
        + one_node('calculator: "A"\ninput_stream: "in"\noutput_stream: "mid"')
        + 'node { calculator: "B" input_stream: "mid" output_stream: "out"\n'
        '  input_stream_handler { input_stream_handler: "DefaultInputStreamHandler" } }\n'
    )
    first, second = parse_graph(text, "g").nodes
    assert first.input_stream_handler == "ImmediateInputStreamHandler"
    assert second.input_stream_handler == "DefaultInputStreamHandler"


def test_back_edge_and_sync_set_tag_index_are_normalised() -> None:
    text = one_node(
        'calculator: "C"\ninput_stream: "in"\ninput_stream: "LOOPBACK:lb"\n'
        'output_stream: "out"\noutput_stream: "LOOPBACK:lb"\n'
        'input_stream_info { tag_index: "LOOPBACK" back_edge: true }\n'
        'input_stream_info { tag_index: ":0" back_edge: false }\n'
        "input_stream_handler { input_stream_handler: 'SyncSetInputStreamHandler'\n"
        "  options { [mediapipe.SyncSetInputStreamHandlerOptions.ext] {\n"
        "    sync_set { tag_index: 'LOOPBACK' }\n"
        "    sync_set { tag_index: '' tag_index: ':0' } } } }"
    )
    (node,) = parse_graph(text, "g").nodes
    # Only back_edge: true entries count.
    assert node.back_edges == frozenset({"LOOPBACK:0"})
    assert node.sync_sets == (frozenset({"LOOPBACK:0"}), frozenset({":0"}))


def test_unnamed_node_label_uses_calculator_and_position() -> None:
    text = INCREMENT_CHAIN.replace('name: "second_python_node"', "")
    graph = parse_graph(text, "g")
    assert graph.nodes[1].name == ""
    assert graph.nodes[1].label == "PythonExecutorCalculator (node 2)"
    assert graph.nodes[0].label == "first_python_node"


def test_converter_and_inference_options() -> None:
    text = one_node(
        'calculator: "PyTensorOvTensorConverterCalculator"\n'
        'input_stream: "OVTENSOR:in"\noutput_stream: "OVMS_PY_TENSOR:out"\n'
        "node_options: {\n"
        "  [type.googleapis.com/mediapipe.PyTensorOvTensorConverterCalculatorOptions]: {\n"
        '    tag_to_output_tensor_names { key: "OVMS_PY_TENSOR" value: "result_py" }\n'
        "  }\n"
        "}\n"
        "options: {\n"
        "  [mediapipe.OpenVINOInferenceCalculatorOptions.ext] {\n"
        '    tag_to_input_tensor_names { key: "OVTENSOR" value: "x" }\n'
        '    input_order_list: ["a", "b"]\n'
        "  }\n"
        "}"
    )
    (node,) = parse_graph(text, "g").nodes
    converter = node.options["mediapipe.PyTensorOvTensorConverterCalculatorOptions"]
    assert dict(converter.tag_to_output_tensor_names) == {"OVMS_PY_TENSOR": "result_py"}
    inference = node.options["mediapipe.OpenVINOInferenceCalculatorOptions"]
    assert isinstance(inference, pb.OpenVINOInferenceCalculatorOptions)
    assert dict(inference.tag_to_input_tensor_names) == {"OVTENSOR": "x"}
    assert list(inference.input_order_list) == ["a", "b"]


def test_session_options() -> None:
    text = one_node(
        'calculator: "OpenVINOModelServerSessionCalculator"\n'
        'output_side_packet: "SESSION:session"\n'
        "node_options: { [type.googleapis.com / "
        "mediapipe.OpenVINOModelServerSessionCalculatorOptions]: {\n"
        '  servable_name: "dummy" servable_version: "1" } }'
    )
    (node,) = parse_graph(text, "g").nodes
    session = node.options["mediapipe.OpenVINOModelServerSessionCalculatorOptions"]
    assert (session.servable_name, session.servable_version) == ("dummy", "1")
    assert node.output_side_packets == (StreamRef("SESSION", 0, "session"),)


def test_options_extension_form_and_its_precedence_over_node_options() -> None:
    text = one_node(
        'calculator: "PythonExecutorCalculator"\ninput_stream: "INPUT:in"\n'
        'output_stream: "OUTPUT:out"\n'
        "options { [mediapipe.PythonExecutorCalculatorOptions.ext] { handler_path: 'a.py' } }\n"
        "node_options {\n"
        "  [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions] {\n"
        "    handler_path: 'b.py'\n"
        "  }\n"
        "}"
    )
    (node,) = parse_graph(text, "g").nodes
    # calculator.proto: "If the same message type is specified in options and node_options,
    # only the message in options is used."
    assert node.options[PYTHON_OPTIONS].handler_path == "a.py"


def test_unknown_options_extensions_are_skipped() -> None:
    text = one_node(
        'calculator: "Other"\ninput_stream: "in"\noutput_stream: "out"\n'
        "options { [mediapipe.SomeoneElsesOptions.ext] { anything: 1 nested { x: 'y' } } }\n"
        "input_stream_handler { input_stream_handler: 'FixedSizeInputStreamHandler'\n"
        "  options { [mediapipe.FixedSizeInputStreamHandlerOptions.ext] {\n"
        "    trigger_queue_size: 2 } } }"
    )
    (node,) = parse_graph(text, "g").nodes
    assert dict(node.options) == {}
    assert node.input_stream_handler == "FixedSizeInputStreamHandler"


def test_external_input_is_an_input_side_packet() -> None:
    text = one_node(
        'calculator: "C"\ninput_stream: "in"\noutput_stream: "out"\n'
        'input_side_packet: "A:a"\nexternal_input: "B:b"'
    )
    (node,) = parse_graph(text, "g").nodes
    assert node.input_side_packets == (StreamRef("A", 0, "a"), StreamRef("B", 0, "b"))


def test_comments_and_other_graph_fields() -> None:
    text = (
        "# a comment line\n"
        'input_stream: "in"  # trailing comment\n'
        'output_stream: "out"\n'
        'input_side_packet: "MODEL:model"\n'
        "max_queue_size: 8\n"
        "num_threads: 2\n"
        'node { calculator: "C" input_stream: "in" output_stream: "out"\n'
        '  source_layer: 0 max_in_flight: 1 executor: "" }\n'
    )
    graph = parse_graph(text, "g")
    assert graph.input_side_packets == (StreamRef("MODEL", 0, "model"),)
    assert graph.nodes[0].inputs == (StreamRef("", 0, "in"),)


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("# OVMS_GRAPH_QUEUE_MAX_SIZE: AUTO", "AUTO"),
        ("#OVMS_GRAPH_QUEUE_MAX_SIZE:12", "12"),
        ("   #  OVMS_GRAPH_QUEUE_MAX_SIZE :  -3  ", "-3"),
        ("# OVMS_GRAPH_QUEUE_MAX_SIZE: AUTO trailing words", None),
        ("# not OVMS_GRAPH_QUEUE_MAX_SIZE: 4", None),
    ],
)
def test_queue_size_directive_is_kept_as_written(line: str, value: str | None) -> None:
    text = f'input_stream: "in"\n{line}\noutput_stream: "in"\n'
    assert parse_graph(text, "g").queue_size_directive == value


# -- errors ---------------------------------------------------------------------------------


def test_parse_error_names_file_line_and_column() -> None:
    error = graph_error('input_stream: "in"\nnode {\n  nam: "x"\n}\n', "/models/g/graph.pbtxt")
    assert isinstance(error, StatusError)
    assert error.code is StatusCode.MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID
    assert (error.line, error.column) == (3, 3)
    assert str(error) == (
        "Failed to read protobuf graph configuration file - /models/g/graph.pbtxt: line 3 "
        'column 3: Message type "mediapipe.CalculatorGraphConfig.Node" has no field named "nam".'
    )


@pytest.mark.parametrize(
    ("text", "line", "complaint"),
    [
        # An unclosed block: protobuf points after the last token it read.
        ('input_stream: "a"\nnode {\n', 2, 'Expected "}"'),
        ('input_stream: "a"\n\noutput_stream: 7\n', 3, "Expected string"),
        ('node {\n  input_stream_info { tag_index: "A" back_edge: maybe }\n}', 2, "back_edge"),
        ("node { options { merge_fields: true } }\nbogus: 1", 2, 'no field named "bogus"'),
    ],
)
def test_syntax_errors_carry_the_line(text: str, line: int, complaint: str) -> None:
    error = graph_error(text)
    assert error.line == line
    assert f"graph.pbtxt: line {line} column " in str(error)
    assert complaint in str(error)


def test_unknown_node_options_type_is_an_error_that_says_why() -> None:
    text = one_node(
        'calculator: "ImageCroppingCalculator"\ninput_stream: "in"\noutput_stream: "out"\n'
        "node_options: {\n"
        "  [type.googleapis.com / mediapipe.ImageCroppingCalculatorOptions]: { width: 2 }\n"
        "}"
    )
    error = graph_error(text)
    assert "mediapipe.ImageCroppingCalculatorOptions is unknown to ovmsx" in str(error)
    assert "protobuf cannot skip an unknown Any type" in str(error)
    assert PYTHON_OPTIONS in str(error)  # the known types are listed
    # protobuf gives no position for this one; the parser finds the Any itself.
    assert (error.line, error.column) == (8, 3)


def test_two_node_options_of_one_type_are_refused() -> None:
    any_options = (
        "node_options { [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions] "
        "{ handler_path: 'x.py' } }\n"
    )
    error = graph_error(one_node('name: "py"\ncalculator: "C"\n' + any_options * 2))
    assert 'node "py": node_options holds mediapipe.PythonExecutorCalculatorOptions twice' in str(
        error
    )


@pytest.mark.parametrize(
    "options",
    [
        "node_options { [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions] { } }",
        "options { [mediapipe.PythonExecutorCalculatorOptions.ext] { } }",
    ],
)
def test_missing_required_option_names_node_and_field(options: str) -> None:
    error = graph_error(
        one_node(f'name: "python_node"\ncalculator: "PythonExecutorCalculator"\n{options}')
    )
    assert str(error).endswith(
        'graph.pbtxt: node "python_node": mediapipe.PythonExecutorCalculatorOptions is missing '
        "required field handler_path"
    )


def test_missing_servable_name_of_unnamed_node() -> None:
    error = graph_error(
        'node { calculator: "OpenVINOModelServerSessionCalculator"\n'
        "  node_options {\n"
        "    [type.googleapis.com/mediapipe.OpenVINOModelServerSessionCalculatorOptions]\n"
        "    { servable_version: '1' } } }"
    )
    assert "OpenVINOModelServerSessionCalculator (node 1): " in str(error)
    assert "missing required field servable_name" in str(error)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('input_stream: "In"\n', 'graph input_stream "In"'),
        ('output_stream: "A:1x"\n', 'graph output_stream "A:1x"'),
        ('input_side_packet: "a:b"\n', 'graph input_side_packet "a:b"'),
        ('node { name: "n" input_stream: "X:y:z" }', 'node "n": input_stream "X:y:z"'),
        ('node { name: "n" output_stream: "bad name" }', 'node "n": output_stream "bad name"'),
        (
            'node { calculator: "C" input_side_packet: "P:Py" }',
            'C (node 1): input_side_packet "P:Py"',
        ),
        ('node { name: "n" output_side_packet: ":x" }', 'node "n": output_side_packet ":x"'),
        (
            'node { name: "n" input_stream_info { tag_index: "loopback" back_edge: true } }',
            'node "n": tag_index "loopback"',
        ),
        (
            'node { name: "n" input_stream_handler { options {\n'
            "  [mediapipe.SyncSetInputStreamHandlerOptions.ext] { sync_set { tag_index: 'A:B' } }"
            " } } }",
            'node "n": tag_index "A:B"',
        ),
    ],
)
def test_bad_stream_in_graph_names_where(text: str, where: str) -> None:
    error = graph_error(text)
    assert f"graph.pbtxt: {where}" in str(error)
    assert error.source == "graph.pbtxt"


def test_empty_text_is_an_empty_graph() -> None:
    # Reading accepts it; validate_graph refuses a graph without streams.
    graph = parse_graph("", "g")
    assert (graph.input_streams, graph.output_streams, graph.nodes) == ((), (), ())
