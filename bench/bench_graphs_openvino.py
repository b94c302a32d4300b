"""Graph benchmark: graphs that run an OpenVINO model, next to the same model served alone.

Three contenders on one ovmsx server, driven by perf_analyzer over KServe v2 gRPC in one run,
alternating every round:

* ``add_one``: the [1,10] FP32 OpenVINO model alone;
* ``ov_add_one``: a graph of an OpenVINOModelServerSessionCalculator and one
  OpenVINOInferenceCalculator on that model (target: >= 0.9x the model alone);
* ``py_ov_py``: Python pre-processing → PyTensorOvTensorConverterCalculator → the model →
  converter → Python post-processing (target: >= 0.8x the model alone).

    python bench/bench_graphs_openvino.py --perf-analyzer /path/to/perf_analyzer [--write]
    python bench/bench_graphs_openvino.py --load-generator rest_load   # no perf_analyzer: REST
"""

from __future__ import annotations

import json
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path

import bench_models
import numpy as np
import perf_bench
import perf_doc
from bench_serving import Server
from infer_request_gen import InputSpec, make_inputs
from tritonclient import grpc as triton

SECTION = "bench_graphs_openvino"
CONTENDERS = ("add_one", "ov_add_one", "py_ov_py")
CONVERTER_OPTIONS = "type.googleapis.com/mediapipe.PyTensorOvTensorConverterCalculatorOptions"

SESSION = """node {
  calculator: "OpenVINOModelServerSessionCalculator"
  output_side_packet: "SESSION:session"
  node_options: { [type.googleapis.com/mediapipe.OpenVINOModelServerSessionCalculatorOptions]: {
    servable_name: "add_one" } }
}
"""


def _inference(source: str, target: str) -> str:
    return f"""node {{
  calculator: "OpenVINOInferenceCalculator"
  input_side_packet: "SESSION:session"
  input_stream: "INPUT:{source}"
  output_stream: "OUTPUT:{target}"
}}
"""


def _python(name: str, source: str, target: str) -> str:
    return f"""node {{
  name: "{name}"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "IN:{source}"
  output_stream: "OUT:{target}"
  node_options: {{ [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: {{
    handler_path: "{name}.py" }} }}
}}
"""


def _converter(source: str, target: str, to_python: bool) -> str:
    tags = ("OVTENSOR", "OVMS_PY_TENSOR") if to_python else ("OVMS_PY_TENSOR", "OVTENSOR")
    options = (
        f"  node_options: {{ [{CONVERTER_OPTIONS}]: {{"
        f' tag_to_output_tensor_names {{ key: "OVMS_PY_TENSOR" value: "{target}" }} }} }}\n'
        if to_python
        else ""
    )
    return (
        f'node {{\n  calculator: "PyTensorOvTensorConverterCalculator"\n'
        f'  input_stream: "{tags[0]}:{source}"\n  output_stream: "{tags[1]}:{target}"\n'
        f"{options}}}\n"
    )


OV_GRAPH = (
    'input_stream: "input"\noutput_stream: "output"\n' + SESSION + _inference("input", "output")
)

PY_OV_PY_GRAPH = (
    'input_stream: "OVMS_PY_TENSOR:input"\noutput_stream: "OVMS_PY_TENSOR:output"\n'
    + SESSION
    + _python("pre", "input", "pre_out")
    + _converter("pre_out", "model_in", to_python=False)
    + _inference("model_in", "model_out")
    + _converter("model_out", "post_in", to_python=True)
    + _python("post", "post_in", "output")
)

# pre doubles, post halves: the graph's answer is the model's, (x * 2 + 1) / 2 = x + 0.5.
HANDLER = """
import numpy as np
from pyovms import Tensor

class OvmsPythonModel:
    def initialize(self, kwargs):
        self.output = kwargs["output_names"][0]

    def execute(self, inputs):
        return [Tensor(self.output, np.array(inputs[0]) * np.float32(FACTOR))]
"""


def write_repository(root: Path) -> tuple[Path, bench_models.BenchModel]:
    model = bench_models.build_add_one(root)
    config_path = bench_models.write_config([model], root / "config.json")
    config = json.loads(config_path.read_text())
    graphs = {"ov_add_one": OV_GRAPH, "py_ov_py": PY_OV_PY_GRAPH}
    for name, text in graphs.items():
        folder = root / name
        folder.mkdir()
        (folder / "graph.pbtxt").write_text(text)
        (folder / "pre.py").write_text(HANDLER.replace("FACTOR", "2"))
        (folder / "post.py").write_text(HANDLER.replace("FACTOR", "0.5"))
    config["mediapipe_config_list"] = [{"name": name} for name in graphs]
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    return config_path, model


def interface(name: str, model: bench_models.BenchModel) -> tuple[InputSpec, ...]:
    if name == "add_one":
        return model.inputs
    return (InputSpec("input", "FP32", model.inputs[0].shape),)


def check_answers(server: Server, model: bench_models.BenchModel) -> None:
    """perf_analyzer ignores reply status: prove every contender answers right first."""
    expected = {"add_one": (model.output, 1.0), "ov_add_one": ("output", 1.0)}
    expected["py_ov_py"] = ("output", 0.5)
    client = triton.InferenceServerClient(server.url)
    try:
        for name, (output, added) in expected.items():
            (spec,) = interface(name, model)
            data = make_inputs((spec,))[spec.name]
            tensor = triton.InferInput(spec.name, list(spec.shape), spec.datatype)
            tensor.set_data_from_numpy(data)
            got = client.infer(name, [tensor]).as_numpy(output)
            np.testing.assert_allclose(got, data + added, rtol=1e-6)
    finally:
        client.close()


def section(args, rates: perf_bench.Rates) -> str:
    lines = perf_bench.header(
        "## Graphs running an OpenVINO model (`bench/bench_graphs_openvino.py`)", args
    )
    lines += [
        "| concurrency | `add_one` model alone | `ov_add_one` session + inference nodes | ratio "
        "| `py_ov_py` Python → converter → model → converter → Python | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for c in args.concurrency:
        model, ov_graph, py_graph = (statistics.median(rates[(n, c)]) for n in CONTENDERS)
        lines.append(
            f"| {c} | {model:,.0f} | {ov_graph:,.0f} | **{ov_graph / model:.2f}** "
            f"| {py_graph:,.0f} | **{py_graph / model:.2f}** |"
        )
    each = "; ".join(
        f"{name} c={c}: {', '.join(f'{r:,.0f}' for r in rates[(name, c)])}"
        for c in args.concurrency
        for name in CONTENDERS
    )
    lines += ["", f"Every round: {each}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    args = perf_bench.parse_arguments(__doc__, concurrency=[1, 4], rest_load=True)
    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_graphs_ov-")))
        config, model = write_repository(root)
        contenders = {name: interface(name, model) for name in CONTENDERS}
        rates = perf_bench.run_rounds(
            args, stack, config, root, contenders, lambda server: check_answers(server, model)
        )
    perf_doc.publish(section(args, rates), SECTION, args)


if __name__ == "__main__":
    main()
