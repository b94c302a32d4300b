"""Graphs whose nodes call OpenVINO models (session + inference calculators), and their models.

Every graph is small and checks one thing; the tests of the two calculators serve all of them
from one config. Node names are given so that load errors can be matched exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import serving_models as sm
from serving_graphs import graph_text
from serving_pipelines import model_node, pipeline

SESSION = "OpenVINOModelServerSessionCalculator"
INFERENCE = "OpenVINOInferenceCalculator"
SESSION_OPTIONS = f"[type.googleapis.com / mediapipe.{SESSION}Options]"
INFERENCE_OPTIONS = f"[type.googleapis.com / mediapipe.{INFERENCE}Options]"

# A DAG running the model "dummy" twice, which graphs name as their servable.
PIPELINE = "dummy_twice"
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


# -- models --------------------------------------------------------------------------------------


def _named(model: ov.Model, *names: str) -> ov.Model:
    for output, name in zip(model.outputs, names, strict=True):
        output.get_tensor().set_names({name})
    return model


def plus(value: float, input_name: str = "b", output_name: str = "a") -> ov.Model:
    """FP32 ``b`` [1,10] -> ``a`` = b + value (OVMS's "dummy" when value is 1)."""
    x = ops.parameter([1, 10], ov.Type.f32, name=input_name)
    return _named(ov.Model([ops.add(x, ops.constant(np.float32(value)))], [x], "plus"), output_name)


def add() -> ov.Model:
    """FP32 ``input1``, ``input2`` [1,10] -> ``sum`` (OVMS's "add")."""
    one = ops.parameter([1, 10], ov.Type.f32, name="input1")
    two = ops.parameter([1, 10], ov.Type.f32, name="input2")
    return _named(ov.Model([ops.add(one, two)], [one, two], "add"), "sum")


def fan_out() -> ov.Model:
    """FP32 ``x`` [1,3] -> ``zeta`` = x + 100, ``alpha`` = x + 1, ``mid`` = x + 10: the model's
    output order differs from the name order (alpha, mid, zeta)."""
    x = ops.parameter([1, 3], ov.Type.f32, name="x")
    results = [ops.add(x, ops.constant(np.float32(v))) for v in (100, 1, 10)]
    return _named(ov.Model(results, [x], "fan_out"), "zeta", "alpha", "mid")


def stack3() -> ov.Model:
    """FP32 ``p``, ``q``, ``r`` [1,3] -> ``stacked`` [3,3], their rows in that order."""
    params = [ops.parameter([1, 3], ov.Type.f32, name=n) for n in "pqr"]
    return _named(ov.Model([ops.concat(params, 0)], params, "stack3"), "stacked")


def int64_increment() -> ov.Model:
    """INT64 ``x`` [-1] -> ``y`` = x + 1 (a datatype MediaPipe tensors cannot hold)."""
    x = ops.parameter([-1], ov.Type.i64, name="x")
    return _named(ov.Model([ops.add(x, ops.constant(np.array([1], np.int64)))], [x], "i64"), "y")


# -- graph text ------------------------------------------------------------------------------------


def session_node(
    servable: str | None,
    version: str | None = None,
    side: str = "SESSION:session",
    name: str = "session",
    extra: str = "",
) -> str:
    """A session node; ``servable=None`` leaves its options out entirely."""
    options = ""
    if servable is not None:
        fields = f'servable_name: "{servable}"'
        if version is not None:
            fields += f' servable_version: "{version}"'
        options = f"  node_options: {{ {SESSION_OPTIONS}: {{ {fields} }} }}\n"
    sides = f'  output_side_packet: "{side}"\n' if side else ""
    return f'node {{\n  name: "{name}"\n  calculator: "{SESSION}"\n{sides}{extra}{options}}}\n'


def inference_node(
    name: str,
    inputs: list[str],
    outputs: list[str],
    in_map: dict[str, str] | None = None,
    out_map: dict[str, str] | None = None,
    input_order: list[str] | None = None,
    output_order: list[str] | None = None,
    side: str = "SESSION:session",
    extra: str = "",
) -> str:
    streams = "".join(f'  input_stream: "{s}"\n' for s in inputs)
    streams += "".join(f'  output_stream: "{s}"\n' for s in outputs)
    sides = f'  input_side_packet: "{side}"\n' if side else ""
    fields = []
    for key, mapping in (("input", in_map), ("output", out_map)):
        for tag, tensor in (mapping or {}).items():
            fields.append(f'tag_to_{key}_tensor_names {{ key: "{tag}" value: "{tensor}" }}')
    for key, order in (("input", input_order), ("output", output_order)):
        if order is not None:
            fields.append(f"{key}_order_list: {json.dumps(order)}")
    options = ""
    if fields:
        options = f"  node_options: {{ {INFERENCE_OPTIONS}: {{ {' '.join(fields)} }} }}\n"
    return (
        f'node {{\n  name: "{name}"\n  calculator: "{INFERENCE}"\n{sides}{streams}{extra}'
        f"{options}}}\n"
    )


def model_graph(servable: str = "dummy", version: str | None = "1", **inference) -> str:
    """in -> ``servable`` (B:in mapped to b, A:out mapped to a) -> out, with changes to the
    inference node's keyword arguments."""
    node = {"in_map": {"B": "b"}, "out_map": {"A": "a"}} | inference
    return graph_text(
        ["in"],
        ["out"],
        [session_node(servable, version), inference_node("infer", ["B:in"], ["A:out"], **node)],
    )


def _vectors(fan: dict, stack: dict) -> str:
    """x -> fan_out (a list of its outputs) -> stack3 (the list as its inputs) -> out."""
    return graph_text(
        ["x"],
        ["out"],
        [
            session_node("fan_out", side="SESSION:fan", name="fan_session"),
            session_node("stack3", side="SESSION:stack", name="stack_session"),
            inference_node(
                "fan", ["X:x"], ["OVTENSORS:list"], {"X": "x"}, side="SESSION:fan", **fan
            ),
            inference_node(
                "stack",
                ["OVTENSORS:list"],
                ["STACKED:out"],
                out_map={"STACKED": "stacked"},
                side="SESSION:stack",
                **stack,
            ),
        ],
    )


def _pipeline_graph(version: str) -> str:
    """in -> the DAG PIPELINE (its input "numbers", output "result") -> out."""
    return graph_text(
        ["in"],
        ["out"],
        [
            session_node(PIPELINE, version),
            inference_node(
                "infer",
                ["NUMBERS:in"],
                ["RESULT:out"],
                {"NUMBERS": "numbers"},
                {"RESULT": "result"},
            ),
        ],
    )


SEED_CHAIN = graph_text(
    ["in1", "in2"],
    ["out"],
    [
        session_node("dummy", "1", "SESSION:dummy", "dummy_session"),
        session_node("add", "1", "SESSION:add", "add_session"),
        inference_node(
            "dummy_node",
            ["DUMMY_IN:in1"],
            ["DUMMY_OUT:dummy_output"],
            {"DUMMY_IN": "b"},
            {"DUMMY_OUT": "a"},
            side="SESSION:dummy",
        ),
        inference_node(
            "add_node",
            ["ADD_INPUT1:dummy_output", "ADD_INPUT2:in2"],
            ["SUM:out"],
            {"ADD_INPUT1": "input1", "ADD_INPUT2": "input2"},
            {"SUM": "sum"},
            side="SESSION:add",
        ),
    ],
)

# Graphs that load and serve: name -> graph.pbtxt text.
GOOD_GRAPHS = {
    # COMPAT §12.3 graphdummyadapterfull / graphaddadapterfull.
    "dummy_full": model_graph(),
    "add_full": graph_text(
        ["in1", "in2"],
        ["out"],
        [
            session_node("add", "1"),
            inference_node(
                "infer",
                ["INPUT1:in1", "INPUT2:in2"],
                ["SUM:out"],
                {"INPUT1": "input1", "INPUT2": "input2"},
                {"SUM": "sum"},
            ),
        ],
    ),
    "seed_chain": SEED_CHAIN,
    # MediapipeNoTagMapping.DummyUppercase: the tags are the model's tensor names.
    "uppercase": graph_text(
        ["in"],
        ["out"],
        [session_node("dummy_upper"), inference_node("infer", ["B:in"], ["A:out"])],
    ),
    # graphdummyadapterfull_two_outputs: two inference nodes on one SESSION.
    "shared_session": graph_text(
        ["in_1", "in_2"],
        ["out_1", "out_2"],
        [
            session_node("dummy", "1"),
            inference_node("first", ["B:in_1"], ["A:out_1"], {"B": "b"}, {"A": "a"}),
            inference_node("second", ["B:in_2"], ["A:out_2"], {"B": "b"}, {"A": "a"}),
        ],
    ),
    # two_inputs has outputs sum and diff; only sum is mapped.
    "extra_outputs": graph_text(
        ["a", "b"],
        ["out"],
        [
            session_node("two_inputs"),
            inference_node(
                "infer", ["A:a", "B:b"], ["SUM:out"], {"A": "a", "B": "b"}, {"SUM": "sum"}
            ),
        ],
    ),
    "wrong_input_name": model_graph(in_map={"B": "nope"}),
    # A second input tag names a second tensor ("C") the model does not have.
    "extra_input": graph_text(
        ["in", "in2"],
        ["out"],
        [
            session_node("dummy", "1"),
            inference_node("infer", ["B:in", "C:in2"], ["A:out"], {"B": "b"}, {"A": "a"}),
        ],
    ),
    "missing_output": model_graph(out_map={"A": "nope"}),
    "unknown_servable": graph_text(
        ["in"],
        ["out"],
        [session_node("no_such_model", "1"), inference_node("infer", ["B:in"], ["A:out"])],
    ),
    # A DAG as the servable; OVMS ignores the version asked of a DAG.
    "pipeline_servable": _pipeline_graph("1"),
    "pipeline_servable_v7": _pipeline_graph("7"),
    # Lists: fan_out's outputs all, in name order -> stack3's p, q, r.
    "vectors_by_name": _vectors({}, {"input_order": ["p", "q", "r"]}),
    "vectors_output_order": _vectors(
        {"output_order": ["zeta", "alpha", "mid"]}, {"input_order": ["p", "q", "r"]}
    ),
    "vectors_input_order": _vectors({}, {"input_order": ["r", "q", "p"]}),
    "vectors_size_mismatch": _vectors({}, {"input_order": ["p", "q"]}),
    "vectors_missing_output": _vectors(
        {"output_order": ["alpha", "nope", "mid"]}, {"input_order": ["p", "q", "r"]}
    ),
    # graphdummy_mp: MediaPipe tensors from the request to the model and back.
    "mp_tensor": graph_text(
        ["TENSOR:in"],
        ["TENSOR:out"],
        [
            session_node("dummy", "1"),
            inference_node(
                "infer", ["TENSOR_B:in"], ["TENSORA:out"], {"TENSOR_B": "b"}, {"TENSORA": "a"}
            ),
        ],
    ),
    "mp_tensor_int64_in": graph_text(
        ["in"],
        ["out"],
        [
            session_node("int64"),
            inference_node("infer", ["TENSOR_X:in"], ["Y:out"], {"TENSOR_X": "x"}, {"Y": "y"}),
        ],
    ),
    "mp_tensor_int64_out": graph_text(
        ["in"],
        ["out"],
        [
            session_node("int64"),
            inference_node("infer", ["X:in"], ["TENSOR_Y:out"], {"X": "x"}, {"TENSOR_Y": "y"}),
        ],
    ),
}


def _broken(session: str, infer: str) -> str:
    return graph_text(["in"], ["out"], [session, infer])


def _refused(node: str, calculator: str, problem: str) -> str:
    """The load error of a node whose contract check failed."""
    return f"Failed to initialize mediapipe graph - node {node} ({calculator}): {problem}"


_INFER = inference_node("infer", ["B:in"], ["A:out"], {"B": "b"}, {"A": "a"})
_NO_NAME = _refused("session", SESSION, "servable_name is required in its options")
_NO_SESSION_OUT = _refused(
    "session", SESSION, 'it needs exactly one output_side_packet "SESSION:<name>"'
)
_STREAMS = _refused("infer", INFERENCE, "it needs at least one input and one output stream")

# Graphs that must not load: name -> (graph text, the start of the status message).
BROKEN_GRAPHS: dict[str, tuple[str, str]] = {
    "no_session_options": (_broken(session_node(None), _INFER), _NO_NAME),
    "empty_servable_name": (_broken(session_node(""), _INFER), _NO_NAME),
    "session_with_streams": (
        _broken(session_node("dummy", extra='  input_stream: "in"\n'), _INFER),
        _refused("session", SESSION, "it takes no input or output streams"),
    ),
    "session_without_side_packet": (
        _broken(session_node("dummy", side=""), _INFER),
        _NO_SESSION_OUT,
    ),
    "session_wrong_side_packet_tag": (
        _broken(session_node("dummy", side="MODEL:session"), _INFER),
        _NO_SESSION_OUT,
    ),
    "inference_without_inputs": (
        _broken(session_node("dummy"), inference_node("infer", [], ["A:out"])),
        _STREAMS,
    ),
    "inference_without_outputs": (
        _broken(session_node("dummy"), inference_node("infer", ["B:in"], [])),
        _STREAMS,
    ),
    "inference_without_session": (
        _broken(session_node("dummy"), inference_node("infer", ["B:in"], ["A:out"], side="")),
        _refused("infer", INFERENCE, 'it needs input_side_packet "SESSION:<name>"'),
    ),
    "inference_with_output_side_packet": (
        _broken(
            session_node("dummy"),
            inference_node(
                "infer", ["B:in"], ["A:out"], extra='  output_side_packet: "EXTRA:extra"\n'
            ),
        ),
        _refused("infer", INFERENCE, "it publishes no output side packets"),
    ),
    "input_map_and_order": (
        _broken(
            session_node("dummy"),
            inference_node("infer", ["B:in"], ["A:out"], {"B": "b"}, input_order=["b"]),
        ),
        _refused(
            "infer",
            INFERENCE,
            "Use tag_to_input_tensor_names or input_order_list not both at once",
        ),
    ),
    "output_map_and_order": (
        _broken(
            session_node("dummy"),
            inference_node("infer", ["B:in"], ["A:out"], out_map={"A": "a"}, output_order=["a"]),
        ),
        _refused(
            "infer",
            INFERENCE,
            "Use tag_to_output_tensor_names or output_order_list not both at once",
        ),
    ),
    "tftensor_input": (
        _broken(session_node("dummy"), inference_node("infer", ["TFTENSOR_B:in"], ["A:out"])),
        "Functionality not implemented - node infer: tag TFTENSOR_B ",
    ),
    "tflite_tensor_output": (
        _broken(session_node("dummy"), inference_node("infer", ["B:in"], ["TFLITE_TENSORA:out"])),
        "Functionality not implemented - node infer: tag TFLITE_TENSORA ",
    ),
}


# -- the server's config ---------------------------------------------------------------------------


def build_models(root: Path) -> list[dict]:
    """The models the graphs name, saved under ``root``; their config entries."""
    models = {
        "dummy": plus(1),
        "add": add(),
        "dummy_upper": plus(1, "B", "A"),
        "two_inputs": sm.two_inputs(),
        "fan_out": fan_out(),
        "stack3": stack3(),
        "int64": int64_increment(),
    }
    for name, model in models.items():
        sm.save(model, root / name)
    return [{"config": _entry(name, root / name)} for name in models]


def _entry(name: str, base: Path, **settings) -> dict:
    # This CPU would otherwise infer in bf16; the tests compare numbers exactly.
    return {"name": name, "base_path": str(base), "plugin_config": F32, **settings}


def dummy_twice() -> dict:
    """The DAG ``numbers`` -> dummy -> dummy -> ``result`` (numbers + 2)."""
    return pipeline(
        PIPELINE,
        ["numbers"],
        [
            model_node("once", "dummy", {"b": ("request", "numbers")}, {"a": "once"}),
            model_node("twice", "dummy", {"b": ("once", "once")}, {"a": "twice"}),
        ],
        {"result": ("twice", "twice")},
    )


def write_graphs(root: Path, graphs: dict[str, str], models: list[dict], **extra) -> Path:
    """A folder per graph under ``root`` and ``root/config.json`` serving them and ``models``."""
    for name, text in graphs.items():
        (root / name).mkdir(parents=True)
        (root / name / "graph.pbtxt").write_text(text)
    config = {
        "model_config_list": models,
        "mediapipe_config_list": [{"name": name} for name in graphs],
        **extra,
    }
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def versioned_model(root: Path, name: str, versions: tuple[int, ...]) -> dict:
    """Versions ``versions`` of ``name`` (version N: a = b + N), served with every version."""
    for version in versions:
        sm.save(plus(version), root / name, version)
    return {"config": _entry(name, root / name, model_version_policy={"all": {}})}


def write_calculator_graphs(root: Path) -> Path:
    """Every graph of GOOD_GRAPHS and BROKEN_GRAPHS, their models and the DAG, in one config."""
    graphs = dict(GOOD_GRAPHS)
    graphs.update({name: text for name, (text, _) in BROKEN_GRAPHS.items()})
    models = build_models(root / "models")
    return write_graphs(root, graphs, models, pipeline_config_list=[dummy_twice()])


# -- versions --------------------------------------------------------------------------------------

VERSIONED = "versioned"  # versions 1 and 2 on disk; version N adds N

# Graph -> the servable_version its session asks for (None: no servable_version at all).
VERSION_GRAPHS: dict[str, str | None] = {
    "version_absent": None,
    "version_1": "1",
    "version_2": "2",
    "version_zero": "0",
    "version_spaces": " 1 ",
    "version_negative": "-1",
    "version_text": "abc",
    "version_over_uint32": "4294967296",
    "version_huge": "99999999999",
    "version_missing": "3",
    "version_uint32_max": "4294967295",
}


def write_version_graphs(root: Path) -> Path:
    """Every graph of VERSION_GRAPHS over the model VERSIONED (versions 1 and 2)."""
    graphs = {name: model_graph(VERSIONED, version) for name, version in VERSION_GRAPHS.items()}
    models = [versioned_model(root / "models", VERSIONED, (1, 2))]
    return write_graphs(root, graphs, models)
