"""Graph folders for the graph tests: a ``graph.pbtxt`` and handler scripts each, written to disk.

Each graph is small and does one thing a test checks. Handlers report what they saw as JSON in
a UINT8 tensor, so a test can read it with ``as_numpy(...).tobytes()``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

PY_OPTIONS = "[type.googleapis.com / mediapipe.PythonExecutorCalculatorOptions]"


def python_node(
    name: str,
    handler: str,
    inputs: list[str],
    outputs: list[str],
    extra: str = "",
) -> str:
    streams = "".join(f'  input_stream: "{s}"\n' for s in inputs)
    streams += "".join(f'  output_stream: "{s}"\n' for s in outputs)
    return (
        "node {\n"
        f'  name: "{name}"\n'
        '  calculator: "PythonExecutorCalculator"\n'
        '  input_side_packet: "PYTHON_NODE_RESOURCES:py"\n'
        f"{streams}{extra}"
        f'  node_options: {{ {PY_OPTIONS}: {{ handler_path: "{handler}" }} }}\n'
        "}\n"
    )


def graph_text(inputs: list[str], outputs: list[str], nodes: list[str]) -> str:
    head = "".join(f'input_stream: "{s}"\n' for s in inputs)
    head += "".join(f'output_stream: "{s}"\n' for s in outputs)
    return head + "\n".join(nodes)


# Handler scripts, by file name.
REPORT = """
import json
import numpy as np
from pyovms import Tensor

def report(name, value):
    return Tensor(name, np.frombuffer(json.dumps(value).encode(), np.uint8))

def describe(t):
    return {"name": t.name, "datatype": t.datatype, "shape": list(t.shape),
            "format": t.data.format, "buffer_shape": list(t.data.shape), "hex": bytes(t).hex()}
"""

HANDLERS = {
    "increment.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def initialize(self, kwargs):
                self.output_name = kwargs["output_names"][0]

            def execute(self, inputs):
                return [Tensor(self.output_name, np.array(inputs[0]) + 1)]
    """,
    "describe.py": """
        from report import describe, report

        class OvmsPythonModel:
            def initialize(self, kwargs):
                self.kwargs = kwargs
                self.output = kwargs["output_names"][0]

            def execute(self, inputs):
                return [report(self.output, {"inputs": [describe(t) for t in inputs],
                                             "kwargs": self.kwargs})]
    """,
    "generate.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                start = int(np.array(inputs[0])[0])
                for i in range(10):
                    yield [Tensor("token", np.array([start + i], np.int32))]
                yield [Tensor("end", np.array([1], np.int32))]
    """,
    "split.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                value = np.array(inputs[0])
                if value[0] < 0:
                    return [Tensor("error_message", np.frombuffer(b"negative", np.uint8))]
                return [Tensor("result", value * 2)]
    """,
    "two_outputs.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                value = np.array(inputs[0])
                return [Tensor("doubled", value * 2), Tensor("negated", -value)]
    """,
    "counter.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs, graph_state):
                graph_state["calls"] = graph_state.get("calls", 0) + 1
                return [Tensor("count", np.array([graph_state["calls"]], np.int32))]
    """,
    "no_initialize.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                return [Tensor("output", np.array(inputs[0]))]
    """,
    "raises.py": """
        class OvmsPythonModel:
            def execute(self, inputs):
                raise ValueError("handler refused the input")
    """,
    "raises_later.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                if np.array(inputs[0])[0] < 0:
                    raise ValueError("negative input")
                return [Tensor("output", np.array(inputs[0]))]
    """,
    "initialize_raises.py": """
        class OvmsPythonModel:
            def initialize(self, kwargs):
                raise RuntimeError("no weights found")

            def execute(self, inputs):
                return []
    """,
    "finalize_raises.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                return [Tensor("output", np.array(inputs[0]))]

            def finalize(self):
                raise RuntimeError("finalize failed on purpose")
    """,
    "returns_none.py": """
        class OvmsPythonModel:
            def execute(self, inputs):
                return None
    """,
    "returns_tuple.py": """
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                return (inputs[0],)
    """,
    "returns_ints.py": """
        class OvmsPythonModel:
            def execute(self, inputs):
                return [1, 2]
    """,
    "returns_unknown_name.py": """
        from pyovms import Tensor

        class OvmsPythonModel:
            def execute(self, inputs):
                return [Tensor("nobody", b"x")]
    """,
    "yields_without_loopback.py": """
        class OvmsPythonModel:
            def execute(self, inputs):
                yield [inputs[0]]
    """,
}

# Two handlers with one file name, in different folders: each node must get its own.
SAME_NAME = {
    "plus/handler.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def initialize(self, kwargs):
                self.output = kwargs["output_names"][0]

            def execute(self, inputs):
                return [Tensor(self.output, np.array(inputs[0]) + 1)]
    """,
    "times/handler.py": """
        import numpy as np
        from pyovms import Tensor

        class OvmsPythonModel:
            def initialize(self, kwargs):
                self.output = kwargs["output_names"][0]

            def execute(self, inputs):
                return [Tensor(self.output, np.array(inputs[0]) * 10)]
    """,
}

GENERATIVE_EXTRA = """  input_stream_info: { tag_index: "LOOPBACK:0", back_edge: true }
  input_stream_handler {
    input_stream_handler: "SyncSetInputStreamHandler"
    options {
      [mediapipe.SyncSetInputStreamHandlerOptions.ext] {
        sync_set { tag_index: "LOOPBACK:0" }
      }
    }
  }
"""
IMMEDIATE_EXTRA = '  input_stream_handler { input_stream_handler: "ImmediateInputStreamHandler" }\n'


def _single(handler: str, output: str = "output") -> str:
    return graph_text(
        ["OVMS_PY_TENSOR:input"],
        [f"OVMS_PY_TENSOR:{output}"],
        [python_node("node", handler, ["INPUT:input"], [f"OUTPUT:{output}"])],
    )


# Graphs that load and serve: name -> graph.pbtxt text.
GOOD_GRAPHS = {
    "increment": graph_text(
        ["OVMS_PY_TENSOR:first_number"],
        ["OVMS_PY_TENSOR:last_number"],
        [
            python_node("first", "increment.py", ["INPUT:first_number"], ["OUTPUT:second"]),
            python_node("second", "increment.py", ["INPUT:second"], ["OUTPUT:third"]),
            python_node("third", "increment.py", ["INPUT:third"], ["OUTPUT:last_number"]),
        ],
    ),
    "describe": _single("describe.py", "report"),
    "tag_order": graph_text(
        ["OVMS_PY_TENSOR_B:b", "OVMS_PY_TENSOR_A:a", "OVMS_PY_TENSOR_C:c"],
        ["OVMS_PY_TENSOR:report"],
        [python_node("abc", "describe.py", ["B:b", "A:a", "C:c"], ["OUTPUT:report"])],
    ),
    "immediate": graph_text(
        ["OVMS_PY_TENSOR_LABELS:labels", "OVMS_PY_TENSOR_IMAGE:image"],
        ["OVMS_PY_TENSOR:report"],
        [
            python_node(
                "immediate",
                "describe.py",
                ["INPUT1:labels", "INPUT2:image"],
                ["OUTPUT:report"],
                IMMEDIATE_EXTRA,
            )
        ],
    ),
    "generative": graph_text(
        ["OVMS_PY_TENSOR:start"],
        ["OVMS_PY_TENSOR_TOKEN:token", "OVMS_PY_TENSOR_END:end"],
        [
            python_node(
                "generator",
                "generate.py",
                ["INPUT:start", "LOOPBACK:loopback"],
                ["TOKEN:token", "END:end", "LOOPBACK:loopback"],
                GENERATIVE_EXTRA,
            )
        ],
    ),
    "incomplete_outputs": graph_text(
        ["OVMS_PY_TENSOR:input"],
        ["OVMS_PY_TENSOR_RESULT:result", "OVMS_PY_TENSOR_ERROR:error_message"],
        [
            python_node(
                "split", "split.py", ["INPUT:input"], ["OUTPUT:result", "ERROR:error_message"]
            )
        ],
    ),
    "two_outputs": graph_text(
        ["OVMS_PY_TENSOR:input"],
        ["OVMS_PY_TENSOR_A:doubled", "OVMS_PY_TENSOR_B:negated"],
        [python_node("two", "two_outputs.py", ["INPUT:input"], ["A:doubled", "B:negated"])],
    ),
    "counter": _single("counter.py", "count"),
    "no_initialize": _single("no_initialize.py"),
    "raises": _single("raises.py"),
    "raises_later": _single("raises_later.py"),
    "finalize_raises": _single("finalize_raises.py"),
    "returns_none": _single("returns_none.py"),
    "returns_tuple": _single("returns_tuple.py"),
    "returns_ints": _single("returns_ints.py"),
    "returns_unknown_name": _single("returns_unknown_name.py"),
    "yields_without_loopback": _single("yields_without_loopback.py"),
    "same_file_names": graph_text(
        ["OVMS_PY_TENSOR:input"],
        ["OVMS_PY_TENSOR:output"],
        [
            python_node("plus", "plus/handler.py", ["INPUT:input"], ["OUTPUT:middle"]),
            python_node("times", "times/handler.py", ["INPUT:middle"], ["OUTPUT:output"]),
        ],
    ),
}


def _node(name: str, calculator: str, inputs: list[str], outputs: list[str], extra="") -> str:
    streams = "".join(f'  input_stream: "{s}"\n' for s in inputs)
    streams += "".join(f'  output_stream: "{s}"\n' for s in outputs)
    return f'node {{\n  name: "{name}"\n  calculator: "{calculator}"\n{streams}{extra}}}\n'


# Graphs that must fail to load: name -> (graph.pbtxt text, words the reason must contain).
BROKEN_GRAPHS: dict[str, tuple[str, list[str]]] = {
    "unknown_calculator": (
        graph_text(["in"], ["out"], [_node("mystery", "NoSuchCalculator", ["in"], ["out"])]),
        ["mystery", "NoSuchCalculator"],
    ),
    "unconnected_stream": (
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [python_node("lonely", "increment.py", ["INPUT:nowhere"], ["OUTPUT:output"])],
        ),
        ["lonely", "nowhere"],
    ),
    "duplicate_output": (
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [
                python_node("one", "increment.py", ["INPUT:input"], ["OUTPUT:output"]),
                python_node("two", "increment.py", ["INPUT:input"], ["OUTPUT:output"]),
            ],
        ),
        ["two", "output"],
    ),
    "duplicate_node_name": (
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [
                python_node("twin", "increment.py", ["INPUT:input"], ["OUTPUT:middle"]),
                python_node("twin", "increment.py", ["INPUT:middle"], ["OUTPUT:output"]),
            ],
        ),
        ["twin"],
    ),
    "cycle": (
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [
                python_node("ping", "increment.py", ["A:input", "B:back"], ["OUTPUT:forth"]),
                python_node("pong", "increment.py", ["INPUT:forth"], ["OUTPUT:back"]),
                python_node("tail", "increment.py", ["INPUT:forth"], ["OUTPUT:output"]),
            ],
        ),
        ["ping", "pong"],
    ),
    "loopback_one_side": (
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [
                python_node(
                    "half_loop", "increment.py", ["INPUT:input", "LOOPBACK:loop"], ["OUTPUT:output"]
                )
            ],
        ),
        ["half_loop", "LOOPBACK"],
    ),
    "initialize_raises": (_single("initialize_raises.py"), ["no weights found"]),
    "missing_handler": (_single("not_there.py"), ["not_there.py"]),
    "not_a_graph": ("node { this is not pbtxt", ["graph.pbtxt"]),
}


def write_graphs(root: Path) -> Path:
    """Every graph folder under ``root``, and ``root/config.json`` serving them all."""
    scripts = {name: textwrap.dedent(text) for name, text in HANDLERS.items()}
    scripts["report.py"] = REPORT
    entries = []
    graphs = {name: text for name, text in GOOD_GRAPHS.items()}
    graphs.update({name: text for name, (text, _) in BROKEN_GRAPHS.items()})
    for name, text in graphs.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "graph.pbtxt").write_text(text)
        for script, source in scripts.items():
            (folder / script).write_text(source)
        for script, source in SAME_NAME.items():
            (folder / script).parent.mkdir(exist_ok=True)
            (folder / script).write_text(textwrap.dedent(source))
        entries.append({"name": name})  # base_path defaults to <config dir>/<name>
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": entries}))
    return config
