"""Graphs with PyTensorOvTensorConverterCalculator nodes, their models and handlers, on disk.

``write_converter_graphs(root)`` writes every model, every graph folder and a ``config.json``
serving them; the converter tests and the metadata tests each start one server on it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import serving_models as sm
from serving_graphs import graph_text, python_node

F32 = {"INFERENCE_PRECISION_HINT": "f32"}

# KServe datatype -> (OpenVINO type, numpy type of its bytes): the integer and FP64 types of
# the serving tests, plus the rest the converter takes. BF16 has no numpy type: its values are
# held as the upper 16 bits of FP32 (``bf16``), which is what BF16 is.
DATATYPES: dict[str, tuple[ov.Type, type]] = {
    **sm.TYPED_INPUTS,
    "FP32": (ov.Type.f32, np.float32),
    "FP16": (ov.Type.f16, np.float16),
    "BF16": (ov.Type.bf16, np.uint16),
    "BOOL": (ov.Type.boolean, np.bool_),
}


def bf16(values) -> np.ndarray:
    """BF16 bits of ``values`` (exact for the small numbers the tests use)."""
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


# ---- graph text -----------------------------------------------------------------------------

CONVERTER = "PyTensorOvTensorConverterCalculator"
_CONVERTER_OPTIONS = "[type.googleapis.com / mediapipe.PyTensorOvTensorConverterCalculatorOptions]"
_SESSION_OPTIONS = "[type.googleapis.com / mediapipe.OpenVINOModelServerSessionCalculatorOptions]"
_INFERENCE_OPTIONS = "[type.googleapis.com / mediapipe.OpenVINOInferenceCalculatorOptions]"


def node(name: str, calculator: str, inputs=(), outputs=(), body: str = "") -> str:
    lines = [f'  name: "{name}"', f'  calculator: "{calculator}"']
    lines += [f'  input_stream: "{s}"' for s in inputs]
    lines += [f'  output_stream: "{s}"' for s in outputs]
    return "node {\n" + "\n".join(lines) + "\n" + body + "}\n"


def _entries(field: str, mapping: dict[str, str]) -> str:
    return "".join(f'{field} {{ key: "{k}" value: "{v}" }} ' for k, v in mapping.items())


def converter(name: str, source: str, target: str, names: dict[str, str] | None = None) -> str:
    """A converter node; ``source``/``target`` may list several streams, comma-separated."""
    body = ""
    if names is not None:
        body = f"  node_options: {{ {_CONVERTER_OPTIONS}: {{ "
        body += _entries("tag_to_output_tensor_names", names) + "} }\n"
    return node(name, CONVERTER, source.split(","), target.split(","), body)


def session(side_packet: str, servable: str) -> str:
    body = f'  output_side_packet: "SESSION:{side_packet}"\n'
    body += f'  node_options: {{ {_SESSION_OPTIONS}: {{ servable_name: "{servable}" }} }}\n'
    return node(f"session_{side_packet}", "OpenVINOModelServerSessionCalculator", body=body)


def inference(
    name: str,
    side_packet: str,
    inputs: list[str],
    outputs: list[str],
    in_map: dict[str, str] | None = None,
    out_map: dict[str, str] | None = None,
    input_order: list[str] | None = None,
    output_order: list[str] | None = None,
) -> str:
    options = _entries("tag_to_input_tensor_names", in_map or {})
    options += _entries("tag_to_output_tensor_names", out_map or {})
    options += "".join(f'input_order_list: "{n}" ' for n in input_order or ())
    options += "".join(f'output_order_list: "{n}" ' for n in output_order or ())
    body = f'  input_side_packet: "SESSION:{side_packet}"\n'
    body += f"  node_options: {{ {_INFERENCE_OPTIONS}: {{ {options}}} }}\n"
    return node(name, "OpenVINOInferenceCalculator", inputs, outputs, body)


# ---- handlers and Python calculators --------------------------------------------------------

HANDLERS = {
    # Adds one in the tensor's own type (BOOL and BF16 pass unchanged), under its output name.
    # Shape and datatype are passed on: a BF16 input holds raw bytes (pyovms has no format).
    "plus_one.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def initialize(self, kwargs):
                self.output = kwargs["output_names"][0]

            def execute(self, inputs):
                (tensor,) = inputs
                values = np.array(tensor)
                if tensor.datatype not in ("BOOL", "BF16"):
                    values = values + np.ones(1, values.dtype)
                return [Tensor(self.output, values, tensor.shape, tensor.datatype)]
    """,
    # Passes its input on as "out" and says what it received (name, datatype, shape) on "seen".
    "receive.py": """
        import json
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                (tensor,) = inputs
                seen = {"name": tensor.name, "datatype": tensor.datatype,
                        "shape": list(tensor.shape), "type": type(tensor).__name__}
                return [Tensor("out", np.array(tensor), tensor.shape, tensor.datatype),
                        Tensor("seen", np.frombuffer(json.dumps(seen).encode(), np.uint8))]
    """,
    # A Tensor whose buffer (5 FP32 values, 20 bytes) is larger than its shape [2, 2] needs.
    "oversized.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                data = np.arange(5, dtype=np.float32).tobytes()
                return [Tensor("oversized", data, shape=[2, 2], datatype="FP32")]
    """,
    # Node "double" doubles, node "negate" negates (FP32), named after its output stream.
    "branch.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def initialize(self, kwargs):
                self.output = kwargs["output_names"][0]
                self.factor = {"double": 2, "negate": -1}[kwargs["node_name"]]

            def execute(self, inputs):
                return [Tensor(self.output, np.array(inputs[0]) * np.float32(self.factor))]
    """,
    # Stacks its two inputs (sorted by tag: LEFT, RIGHT), checking the names converters gave.
    "join.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                names = [t.name for t in inputs]
                if names != ["left", "right"]:
                    raise ValueError(f"unexpected inputs {names}")
                return [Tensor("out", np.concatenate([np.array(t) for t in inputs]))]
    """,
}

# Python calculators (calculator_modules) that make and take whole lists of tensors.
LIST_CALCULATORS = """
import json

import numpy as np

from ovmsx.calculators import PythonCalculator, register_calculator
from pyovms import Tensor


@register_calculator
class PackTensors(PythonCalculator):
    INPUTS = ("A", "B")
    OUTPUTS = ("TENSORS",)

    def process(self, context):
        a, b = context.input("A"), context.input("B")
        context.output("TENSORS", [Tensor("a", np.array(a)), Tensor("b", np.array(b))])


@register_calculator
class UnpackTensors(PythonCalculator):
    INPUTS = ("TENSORS",)
    OUTPUTS = ("FIRST", "SECOND", "REPORT")

    def process(self, context):
        tensors = context.input("TENSORS")
        report = [{"name": t.name, "datatype": t.datatype, "shape": list(t.shape),
                   "type": type(t).__name__} for t in tensors]
        context.output("FIRST", tensors[0])
        context.output("SECOND", tensors[1])
        text = np.frombuffer(json.dumps(report).encode(), np.uint8)
        context.output("REPORT", Tensor("report", text))
"""


# ---- graphs ---------------------------------------------------------------------------------


def _middle(datatype: str) -> str:
    """Python → converter → plus_one_<datatype> model → converter → Python."""
    return graph_text(
        ["OVMS_PY_TENSOR:in"],
        ["OVMS_PY_TENSOR:out", "OVMS_PY_TENSOR_SEEN:seen"],
        [
            python_node("pre", "plus_one.py", ["INPUT:in"], ["OUTPUT:prepared"]),
            converter("to_ov", "OVMS_PY_TENSOR:prepared", "OVTENSOR:model_in"),
            session("model", f"plus_one_{datatype.lower()}"),
            inference("infer", "model", ["X:model_in"], ["Y:model_out"], {"X": "x"}, {"Y": "y"}),
            converter(
                "to_py", "OVTENSOR:model_out", "OVMS_PY_TENSOR:received", {"OVMS_PY_TENSOR": "y"}
            ),
            python_node("post", "receive.py", ["INPUT:received"], ["OUT:out", "SEEN:seen"]),
        ],
    )


def _branch(source: str, side: str) -> list[str]:
    """Python stream ``source`` -> converter -> add_ten model -> converter -> Tensor ``side``."""
    return [
        converter(f"{source}_to_ov", f"OVMS_PY_TENSOR:{source}", f"OVTENSOR:{source}_ov"),
        inference(
            f"{side}_model",
            "add_ten",
            [f"INPUT:{source}_ov"],
            [f"OUTPUT:{side}_ov"],
            {"INPUT": "input"},
            {"OUTPUT": "output"},
        ),
        converter(
            f"{side}_to_py",
            f"OVTENSOR:{side}_ov",
            f"OVMS_PY_TENSOR:{side}",
            {"OVMS_PY_TENSOR": side},
        ),
    ]


# One input, two branches (each a Python node and an inference node), joined by a Python node.
BRANCHES = graph_text(
    ["OVMS_PY_TENSOR:in"],
    ["OVMS_PY_TENSOR:out"],
    [
        python_node("double", "branch.py", ["INPUT:in"], ["OUTPUT:doubled"]),
        python_node("negate", "branch.py", ["INPUT:in"], ["OUTPUT:negated"]),
        session("add_ten", "add_ten"),
        *_branch("doubled", "left"),
        *_branch("negated", "right"),
        python_node("join", "join.py", ["LEFT:left", "RIGHT:right"], ["OUTPUT:out"]),
    ],
)

META_MODEL_GRAPH_NODES = [
    session("meta", "meta"),
    inference("infer", "meta", ["X:model_in"], ["Y:model_out"], {"X": "x"}, {"Y": "y"}),
]

# Graphs that load and serve: name -> graph.pbtxt text.
GOOD_GRAPHS: dict[str, str] = {
    "py_to_ov": graph_text(
        ["OVMS_PY_TENSOR:in"],
        ["OVTENSOR:out"],
        [converter("to_ov", "OVMS_PY_TENSOR:in", "OVTENSOR:out")],
    ),
    "ov_to_py": graph_text(
        ["OVTENSOR:in"],
        ["OVMS_PY_TENSOR:out"],
        [converter("to_py", "OVTENSOR:in", "OVMS_PY_TENSOR:out", {"OVMS_PY_TENSOR": "converted"})],
    ),
    **{f"middle_{dt.lower()}": _middle(dt) for dt in DATATYPES},
    "oversized": graph_text(
        ["OVMS_PY_TENSOR:in"],
        ["OVTENSOR:out"],
        [
            python_node("oversized", "oversized.py", ["INPUT:in"], ["OUTPUT:oversized"]),
            converter("to_ov", "OVMS_PY_TENSOR:oversized", "OVTENSOR:out"),
        ],
    ),
    "indexed": graph_text(
        ["OVTENSOR_A:a", "OVTENSOR_B:b"],
        ["OVMS_PY_TENSOR_X:x", "OVMS_PY_TENSOR_Y:y"],
        [
            converter(
                "both",
                "OVTENSOR:0:a,OVTENSOR:1:b",
                "OVMS_PY_TENSOR:0:x,OVMS_PY_TENSOR:1:y",
                {"OVMS_PY_TENSOR": "first", "OVMS_PY_TENSOR:1": "second"},
            )
        ],
    ),
    "lists": graph_text(
        ["a", "b"],
        ["OVMS_PY_TENSOR_FIRST:first", "OVMS_PY_TENSOR_SECOND:second", "OVMS_PY_TENSOR:report"],
        [
            node("pack", "PackTensors", ["A:a", "B:b"], ["TENSORS:py_list"]),
            converter("list_to_ov", "OVMS_PY_TENSORS:py_list", "OVTENSORS:ov_list"),
            session("two", "two_inputs"),
            inference(
                "infer",
                "two",
                ["OVTENSORS:ov_list"],
                ["OVTENSORS:results"],
                input_order=["a", "b"],
                output_order=["sum", "diff"],
            ),
            converter("list_to_py", "OVTENSORS:results", "OVMS_PY_TENSORS:py_results"),
            node(
                "unpack",
                "UnpackTensors",
                ["TENSORS:py_results"],
                ["FIRST:first", "SECOND:second", "REPORT:report"],
            ),
        ],
    ),
    "branches": BRANCHES,
    # Metadata: straight into the model, through converters, Python only, a missing model.
    "meta_direct": graph_text(["X:model_in"], ["Y:model_out"], META_MODEL_GRAPH_NODES),
    "meta_converted": graph_text(
        ["OVMS_PY_TENSOR:in"],
        ["OVMS_PY_TENSOR:out"],
        [
            converter("to_ov", "OVMS_PY_TENSOR:in", "OVTENSOR:model_in"),
            *META_MODEL_GRAPH_NODES,
            converter("to_py", "OVTENSOR:model_out", "OVMS_PY_TENSOR:out", {"OVMS_PY_TENSOR": "y"}),
        ],
    ),
    "meta_python": graph_text(
        ["OVMS_PY_TENSOR:in"],
        ["OVMS_PY_TENSOR:out"],
        [python_node("pre", "plus_one.py", ["INPUT:in"], ["OUTPUT:out"])],
    ),
    "meta_missing_model": graph_text(
        ["X:model_in"],
        ["Y:model_out"],
        [
            session("meta", "no_such_model"),
            inference("infer", "meta", ["X:model_in"], ["Y:model_out"], {"X": "x"}, {"Y": "y"}),
        ],
    ),
}

# Graphs that must not load: name -> (graph.pbtxt text, the node and problem the reason names).
BROKEN_GRAPHS: dict[str, tuple[str, str]] = {
    "bad_missing_name": (
        graph_text(
            ["OVTENSOR:in"],
            ["OVMS_PY_TENSOR:out"],
            [converter("unnamed", "OVTENSOR:in", "OVMS_PY_TENSOR:out")],
        ),
        "node unnamed (PyTensorOvTensorConverterCalculator): tag_to_output_tensor_names needs "
        'the key "OVMS_PY_TENSOR"',
    ),
    "bad_indexed_missing_name": (
        graph_text(
            ["OVTENSOR_A:a", "OVTENSOR_B:b"],
            ["OVMS_PY_TENSOR_X:x", "OVMS_PY_TENSOR_Y:y"],
            [
                converter(
                    "half_named",
                    "OVTENSOR:0:a,OVTENSOR:1:b",
                    "OVMS_PY_TENSOR:0:x,OVMS_PY_TENSOR:1:y",
                    {"OVMS_PY_TENSOR": "first"},
                )
            ],
        ),
        "node half_named (PyTensorOvTensorConverterCalculator): tag_to_output_tensor_names "
        'needs the key "OVMS_PY_TENSOR:1"',
    ),
    "bad_ov_to_ov": (
        graph_text(
            ["OVTENSOR:in"], ["OVTENSOR:out"], [converter("same", "OVTENSOR:in", "OVTENSOR:out")]
        ),
        "node same (PyTensorOvTensorConverterCalculator): it converts OVTENSOR to OVMS_PY_TENSOR "
        "or back (one input tag and one output tag); the node has inputs ['OVTENSOR'] and "
        "outputs ['OVTENSOR']",
    ),
    "bad_two_input_tags": (
        graph_text(
            ["OVTENSOR:a", "OVMS_PY_TENSOR:b"],
            ["OVMS_PY_TENSOR:out"],
            [
                converter(
                    "mixed",
                    "OVTENSOR:a,OVMS_PY_TENSOR:b",
                    "OVMS_PY_TENSOR:out",
                    {"OVMS_PY_TENSOR": "out"},
                )
            ],
        ),
        "node mixed (PyTensorOvTensorConverterCalculator): it converts OVTENSOR to OVMS_PY_TENSOR "
        "or back (one input tag and one output tag); the node has inputs ['OVMS_PY_TENSOR', "
        "'OVTENSOR'] and outputs ['OVMS_PY_TENSOR']",
    ),
    "bad_unpaired_index": (
        graph_text(
            ["OVTENSOR_A:a", "OVTENSOR_B:b"],
            ["OVMS_PY_TENSOR_X:x"],
            [
                converter(
                    "unpaired",
                    "OVTENSOR:0:a,OVTENSOR:1:b",
                    "OVMS_PY_TENSOR:0:x",
                    {"OVMS_PY_TENSOR": "x"},
                )
            ],
        ),
        "node unpaired (PyTensorOvTensorConverterCalculator): its input and output streams must "
        "pair up by index",
    ),
}


# ---- models ---------------------------------------------------------------------------------


def plus_one(datatype: str) -> ov.Model:
    """``x`` [-1, -1] -> ``y`` = x + 1 in ``datatype`` (BOOL: not x)."""
    ov_type = DATATYPES[datatype][0]
    x = ops.parameter([-1, -1], ov_type, name="x")
    if datatype == "BOOL":
        y = ops.logical_not(x)
    else:
        y = ops.add(x, ops.convert(ops.constant(np.array([[1]], np.float32)), ov_type))
    y.output(0).set_names({"y"})
    return ov.Model([y], [x], f"plus_one_{datatype.lower()}")


def meta() -> ov.Model:
    """FP32 ``x`` [1..8, 3] -> INT32 ``y`` (x rounded toward zero): the two sides differ, and
    the first dimension is a range (KServe metadata shows it as -1)."""
    x = ops.parameter(ov.PartialShape([ov.Dimension(1, 8), 3]), ov.Type.f32, name="x")
    y = ops.convert(x, ov.Type.i32)
    y.output(0).set_names({"y"})
    return ov.Model([y], [x], "meta")


def _models(root: Path) -> list[dict]:
    models = {f"plus_one_{dt.lower()}": plus_one(dt) for dt in DATATYPES}
    models["add_ten"] = sm.add_constant([1, 10], 10, "add_ten")
    models["two_inputs"] = sm.two_inputs()
    models["meta"] = meta()
    entries = []
    for name, model in models.items():
        sm.save(model, root / "models" / name)
        entries.append({"name": name, "base_path": f"models/{name}", "plugin_config": F32})
    return entries


def write_converter_graphs(root: Path) -> Path:
    """Every model and graph folder under ``root``, and ``root/config.json`` serving them."""
    graphs = dict(GOOD_GRAPHS)
    graphs.update({name: text for name, (text, _) in BROKEN_GRAPHS.items()})
    entries = []
    for name, text in graphs.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "graph.pbtxt").write_text(text)
        for script, source in HANDLERS.items():
            (folder / script).write_text(textwrap.dedent(source))
        entry = {"name": name}
        if name == "lists":
            (folder / "list_calculators.py").write_text(LIST_CALCULATORS)
            entry["calculator_modules"] = ["list_calculators.py"]
        entries.append(entry)
    config = {"model_config_list": [{"config": c} for c in _models(root)]}
    config["mediapipe_config_list"] = entries
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path
