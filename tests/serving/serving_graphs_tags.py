"""Graphs for the graph-tag and Python-calculator tests, and the calculator modules they import.

Every graph folder sits under one root next to the modules; a graph lists its modules as
``../<file>.py`` (``calculator_modules``), so ``calculators.py`` is imported once and shared.
Calculators report what they saw as JSON in a UINT8 tensor (``report``), read back with
``as_numpy(...).tobytes()``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

PY_CALC_OPTIONS = "[type.googleapis.com/mediapipe.PythonCalculatorOptions]"

# The module every good graph imports.
CALCULATORS = '''
"""Calculators for the graph-tag tests, written against the public API."""

import json

import numpy as np

from ovmsx import Tensor
from ovmsx.calculators import ImageFrame, NodeFailure, PythonCalculator, register_calculator
from ovmsx.frontend.grpc_predict_v2_pb2 import ModelInferRequest, ModelInferResponse


def report(value):
    return Tensor("report", np.frombuffer(json.dumps(value).encode(), np.uint8))


@register_calculator
class Echo(PythonCalculator):
    """Sends on OUT whatever arrives on IN."""

    INPUTS = ("IN",)
    OUTPUTS = ("OUT",)

    def process(self, context):
        context.output("OUT", context.input("IN"))


@register_calculator
class ImageEcho(PythonCalculator):
    """A new ImageFrame with a copy of the pixels, in the same format, and what it saw."""

    INPUTS = ("IMAGE",)
    OUTPUTS = ("IMAGE", "REPORT")

    def process(self, context):
        frame = context.input("IMAGE")
        if not isinstance(frame, ImageFrame):
            raise NodeFailure(f"IMAGE carries {type(frame).__name__}")
        pixels = frame.numpy()
        context.output("IMAGE", ImageFrame.from_array(pixels.copy(), frame.format))
        seen = [frame.format, frame.height, frame.width, frame.channels, str(pixels.dtype)]
        context.output("REPORT", report(seen))


@register_calculator
class RequestEcho(PythonCalculator):
    """REQUEST -> RESPONSE: every input back as an output of the same name, its data as it
    came (raw or typed), and parameters saying who answered."""

    INPUTS = ("REQUEST",)
    OUTPUTS = ("RESPONSE",)

    def process(self, context):
        request = context.input("REQUEST")
        assert isinstance(request, ModelInferRequest), type(request)
        response = ModelInferResponse(model_name="overwritten by the server", id="and this")
        for index, given in enumerate(request.inputs):
            output = response.outputs.add(
                name=given.name, datatype=given.datatype, shape=given.shape
            )
            if request.raw_input_contents:
                response.raw_output_contents.append(request.raw_input_contents[index])
            else:
                output.contents.CopyFrom(given.contents)
        response.parameters["answered_by"].string_param = self.node_name
        response.parameters["greeting"].string_param = self.options.get("greeting", "")
        response.parameters["inputs"].int64_param = len(request.inputs)
        context.output("RESPONSE", response)


@register_calculator
class WrongResponse(PythonCalculator):
    """Puts the request itself on RESPONSE."""

    INPUTS = ("REQUEST",)
    OUTPUTS = ("RESPONSE",)

    def process(self, context):
        context.output("RESPONSE", context.input("REQUEST"))


@register_calculator
class Inspect(PythonCalculator):
    """Reports its node name, options, side packets (type and value) and its input's type,
    and how many times this instance has been opened and called."""

    INPUTS = ("IN",)
    OUTPUTS = ("REPORT",)
    INPUT_SIDE_PACKETS = ("TEXT?", "NUMBER?", "FLAG?")

    def open(self, context):
        self.opened = getattr(self, "opened", 0) + 1
        self.calls = 0
        self.sides = {
            tag: [type(value).__name__, value]
            for tag in ("TEXT", "NUMBER", "FLAG")
            if (value := context.side_packet(tag)) is not None
        }

    def process(self, context):
        self.calls += 1
        context.output("REPORT", report({
            "node": self.node_name,
            "options": dict(self.options),
            "side_packets": self.sides,
            "input": type(context.input("IN")).__name__,
            "opened": self.opened,
            "calls": self.calls,
        }))


@register_calculator
class InspectStrict(Inspect):
    """Inspect, with every side packet required."""

    INPUT_SIDE_PACKETS = ("TEXT", "NUMBER", "FLAG")


@register_calculator(name="PublishScale")
class Publisher(PythonCalculator):
    """Publishes the ``scale`` option as the SCALE side packet in open(); no streams."""

    OUTPUT_SIDE_PACKETS = ("SCALE",)

    def open(self, context):
        context.set_side_packet("SCALE", int(self.options["scale"]))


@register_calculator
class Scale(PythonCalculator):
    """IN times the SCALE side packet."""

    INPUTS = ("IN",)
    OUTPUTS = ("OUT",)
    INPUT_SIDE_PACKETS = ("SCALE",)

    def process(self, context):
        scale = context.side_packet("SCALE")
        context.output("OUT", Tensor("out", np.array(context.input("IN")) * scale))


@register_calculator
class Fails(PythonCalculator):
    """Echoes, except: a negative first value raises ValueError, zero a FAILED_PRECONDITION."""

    INPUTS = ("IN",)
    OUTPUTS = ("OUT",)

    def process(self, context):
        value = context.input("IN")
        first = np.array(value).reshape(-1)[0]
        if first < 0:
            raise ValueError("negative input on purpose")
        if first == 0:
            raise NodeFailure("zero is refused", "FAILED_PRECONDITION")
        context.output("OUT", value)


@register_calculator
class OpenFails(PythonCalculator):
    INPUTS = ("IN",)
    OUTPUTS = ("OUT",)

    def open(self, context):
        raise RuntimeError("cannot open on purpose")

    def process(self, context):
        context.output("OUT", context.input("IN"))


@register_calculator
class Picky(PythonCalculator):
    """Refuses, at load, a node whose ``mode`` option is not upper or lower."""

    INPUTS = ("IN",)
    OUTPUTS = ("OUT",)

    @classmethod
    def check_node(cls, node):
        options = node.options.get("mediapipe.PythonCalculatorOptions")
        mode = options.params.get("mode", "") if options else ""
        if mode not in ("upper", "lower"):
            raise ValueError(f'option mode must be upper or lower, not "{mode}"')

    def process(self, context):
        context.output("OUT", context.input("IN"))
'''

# Modules that cannot be imported, or register what they may not.
BAD_MODULES = {
    "raises_at_import.py": 'raise RuntimeError("cannot import on purpose")\n',
    "syntax_error.py": "def broken(:\n    pass\n",
    "takes_a_builtin_name.py": textwrap.dedent("""
        from ovmsx.calculators import PythonCalculator, register_calculator

        @register_calculator(name="PythonExecutorCalculator")
        class Impostor(PythonCalculator):
            pass
    """),
}


def graph_text(inputs: list[str], outputs: list[str], nodes: list[str]) -> str:
    head = "".join(f'input_stream: "{s}"\n' for s in inputs)
    head += "".join(f'output_stream: "{s}"\n' for s in outputs)
    return head + "\n".join(nodes)


def node(
    name: str,
    calculator: str,
    inputs: list[str] = (),
    outputs: list[str] = (),
    side_inputs: list[str] = (),
    side_outputs: list[str] = (),
    params: dict[str, str] | None = None,
) -> str:
    lines = [f'  name: "{name}"', f'  calculator: "{calculator}"']
    lines += [f'  input_stream: "{s}"' for s in inputs]
    lines += [f'  output_stream: "{s}"' for s in outputs]
    lines += [f'  input_side_packet: "{s}"' for s in side_inputs]
    lines += [f'  output_side_packet: "{s}"' for s in side_outputs]
    if params is not None:
        entries = " ".join(f'params {{ key: "{k}" value: "{v}" }}' for k, v in params.items())
        lines.append(f"  node_options: {{ {PY_CALC_OPTIONS}: {{ {entries} }} }}")
    return "node {\n" + "\n".join(lines) + "\n}\n"


def _echo(graph_in: str, graph_out: str, calculator: str = "Echo", name: str = "echo") -> str:
    """A graph of one node taking IN and giving OUT; the graph's streams tagged as given."""
    streams_in, streams_out = [f"IN:{graph_in.split(':')[-1]}"], [f"OUT:{graph_out.split(':')[-1]}"]
    return graph_text([graph_in], [graph_out], [node(name, calculator, streams_in, streams_out)])


# Graphs for test_graph_tags.py: name -> graph.pbtxt text (all import calculators.py).
TAG_GRAPHS = {
    "image_echo": graph_text(
        ["IMAGE:image"],
        ["IMAGE:image_out", "report"],
        [node("image_echo", "ImageEcho", ["IMAGE:image"], ["IMAGE:image_out", "REPORT:report"])],
    ),
    # No node: the graph's IMAGE input is its IMAGE output.
    "image_direct": graph_text(["IMAGE:image"], ["IMAGE:image"], []),
    # An OpenVINO tensor put on an IMAGE output.
    "image_output_not_an_image": _echo("in", "IMAGE:out"),
    "mp_tensor": _echo("TENSOR:t", "TENSOR:t_out"),
    "ov_tensors": graph_text(
        ["plain", "OVTENSOR:ov"],
        ["plain_out", "OVTENSOR:ov_out"],
        [
            node("plain", "Echo", ["IN:plain"], ["OUT:plain_out"]),
            node("ov", "Echo", ["IN:ov"], ["OUT:ov_out"]),
        ],
    ),
    "passthrough": graph_text(
        ["REQUEST:req"],
        ["RESPONSE:res"],
        [
            node(
                "kserve_echo",
                "RequestEcho",
                ["REQUEST:req"],
                ["RESPONSE:res"],
                params={"greeting": "hello"},
            )
        ],
    ),
    "wrong_response": graph_text(
        ["REQUEST:req"],
        ["RESPONSE:res"],
        [node("wrong", "WrongResponse", ["REQUEST:req"], ["RESPONSE:res"])],
    ),
    "side_packets": graph_text(
        ["in"],
        ["report"],
        [
            node(
                "inspect",
                "InspectStrict",
                ["IN:in"],
                ["REPORT:report"],
                side_inputs=["TEXT:text", "NUMBER:number", "FLAG:flag"],
            )
        ],
    ),
    "optional_side_packets": graph_text(
        ["in"],
        ["report"],
        [
            node(
                "inspect",
                "Inspect",
                ["IN:in"],
                ["REPORT:report"],
                side_inputs=["TEXT:text", "NUMBER:number", "FLAG:flag"],
            )
        ],
    ),
    "published_side_packet": graph_text(
        ["in"],
        ["out"],
        [
            node("scale", "Scale", ["IN:in"], ["OUT:out"], side_inputs=["SCALE:factor"]),
            node("publish", "PublishScale", side_outputs=["SCALE:factor"], params={"scale": "3"}),
        ],
    ),
}

# Passthrough graphs OVMS refuses: name -> (graph.pbtxt text, status message).
BROKEN_TAG_GRAPHS = {
    "request_without_response": (
        _echo("REQUEST:req", "out"),
        "A graph taking the whole KServe request (REQUEST tag) must answer with a RESPONSE tag "
        "output",
    ),
    "response_without_request": (
        _echo("in", "RESPONSE:res"),
        "A graph answering with the whole KServe response (RESPONSE tag) must take a REQUEST tag "
        "input",
    ),
    "passthrough_extra_input": (
        graph_text(
            ["REQUEST:req", "extra"],
            ["RESPONSE:res"],
            [
                node("kserve_echo", "RequestEcho", ["REQUEST:req"], ["RESPONSE:res"]),
                node("extra", "Echo", ["IN:extra"], ["OUT:unused"]),
            ],
        ),
        "KServe passthrough through mediapipe graph requires having only one input (request)",
    ),
    "passthrough_extra_output": (
        graph_text(
            ["REQUEST:req"],
            ["RESPONSE:res", "extra"],
            [
                node("kserve_echo", "RequestEcho", ["REQUEST:req"], ["RESPONSE:res"]),
                node("extra", "Echo", ["IN:req"], ["OUT:extra"]),
            ],
        ),
        "KServe passthrough through mediapipe graph requires having only one output (response)",
    ),
}

# Graphs for test_graph_python_calculators.py: name -> graph.pbtxt text.
CALCULATOR_GRAPHS = {
    "options": graph_text(
        ["in"],
        ["report"],
        [
            node(
                "inspect_options",
                "Inspect",
                ["IN:in"],
                ["REPORT:report"],
                params={"colour": "blue", "size": "3"},
            )
        ],
    ),
    "fails": _echo("in", "out", "Fails", "fails"),
    "open_fails": _echo("in", "out", "OpenFails", "opener"),
    "picky_upper": graph_text(
        ["in"], ["out"], [node("picky", "Picky", ["IN:in"], ["OUT:out"], params={"mode": "upper"})]
    ),
}

# Graphs that must not load: name -> (graph.pbtxt text, modules, words the reason contains).
BROKEN_CALCULATOR_GRAPHS: dict[str, tuple[str, list[str], list[str]]] = {
    "module_missing": (
        _echo("in", "out"),
        ["../calculators.py", "not_there.py"],
        [
            "Failed to initialize mediapipe graph - graph module_missing: calculator module "
            "not_there.py failed to import: FileNotFoundError: ",
            "module_missing/not_there.py does not exist",
        ],
    ),
    "module_raises": (
        _echo("in", "out"),
        ["../raises_at_import.py"],
        [
            "Failed to initialize mediapipe graph - graph module_raises: calculator module "
            "../raises_at_import.py failed to import: RuntimeError: cannot import on purpose"
        ],
    ),
    "module_syntax_error": (
        _echo("in", "out"),
        ["../syntax_error.py"],
        [
            "Failed to initialize mediapipe graph - graph module_syntax_error: calculator module "
            "../syntax_error.py failed to import: SyntaxError: ",
            "syntax_error.py, line 1",
        ],
    ),
    "module_name_unknown": (
        _echo("in", "out"),
        ["no_such_package.calculators"],
        [
            "graph module_name_unknown: calculator module no_such_package.calculators failed to "
            "import: ModuleNotFoundError: No module named 'no_such_package'"
        ],
    ),
    "calculator_not_registered": (
        _echo("in", "out", "NobodyRegisteredThis"),
        ["../calculators.py"],
        [
            'node "echo": unknown calculator "NobodyRegisteredThis" (known: ',
            # The user's calculators and the built-in ones (MediaPipe's core ones among them).
            " Echo, EmbeddingsCalculatorOV, ",
            " InspectStrict, OpenFails, OpenVINOInferenceCalculator, ",
            " PassThroughCalculator, ",
            " PyTensorOvTensorConverterCalculator, PythonExecutorCalculator, RequestEcho, "
            "RerankCalculatorOV, Scale, SidePacketToStreamCalculator, ",
            " WrongResponse)",
        ],
    ),
    "name_taken": (
        _echo("in", "out"),
        ["../calculators.py", "../takes_a_builtin_name.py"],
        [
            "calculator PythonExecutorCalculator is registered twice (ovmsx (built in) and ",
            "takes_a_builtin_name.Impostor)",
        ],
    ),
    "undeclared_input_tag": (
        graph_text(["in"], ["out"], [node("echo", "Echo", ["WRONG:in"], ["OUT:out"])]),
        ["../calculators.py"],
        [
            'Failed to initialize mediapipe graph - node echo (Echo): input stream tag "WRONG" '
            "is not one it declares (IN)"
        ],
    ),
    "missing_required_tag": (
        graph_text(["in"], ["out"], [node("scale", "Scale", ["IN:in"], ["OUT:out"])]),
        ["../calculators.py"],
        [
            "Failed to initialize mediapipe graph - node scale (Scale): the calculator requires "
            'the input side packet tag "SCALE"'
        ],
    ),
    "check_node_refuses": (
        graph_text(
            ["in"],
            ["out"],
            [node("picky", "Picky", ["IN:in"], ["OUT:out"], params={"mode": "sideways"})],
        ),
        ["../calculators.py"],
        [
            "Failed to initialize mediapipe graph - node picky (Picky): option mode must be "
            'upper or lower, not "sideways"'
        ],
    ),
}


def write_graphs(root: Path, graphs: dict[str, tuple[str, list[str]]]) -> Path:
    """``root/<name>/graph.pbtxt`` for each ``name -> (text, calculator_modules)``, the
    modules next to the folders, and ``root/config.json`` serving them all."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "calculators.py").write_text(CALCULATORS)
    for name, source in BAD_MODULES.items():
        (root / name).write_text(source)
    entries = []
    for name, (text, modules) in graphs.items():
        (root / name).mkdir()
        (root / name / "graph.pbtxt").write_text(text)
        entries.append({"name": name, "calculator_modules": modules})
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": entries}))
    return config


def tag_graphs() -> dict[str, tuple[str, list[str]]]:
    graphs = dict(TAG_GRAPHS)
    graphs.update({name: text for name, (text, _) in BROKEN_TAG_GRAPHS.items()})
    return {name: (text, ["../calculators.py"]) for name, text in graphs.items()}


def calculator_graphs() -> dict[str, tuple[str, list[str]]]:
    graphs = {name: (text, ["../calculators.py"]) for name, text in CALCULATOR_GRAPHS.items()}
    graphs.update(
        {name: (text, mods) for name, (text, mods, _) in BROKEN_CALCULATOR_GRAPHS.items()}
    )
    return graphs
