"""Graph benchmark: Python-node graphs over KServe v2 gRPC, next to the tiny OpenVINO model.

Three figures, all from one ovmsx server in one run:

* ``py_add_one``: a one-node graph whose Python handler adds 1 to a [1,10] FP32 tensor, against
  ``add_one``, the OpenVINO model doing the same, both driven by perf_analyzer (the load
  generator of bench_serving.py) at each concurrency. The ratio shows what the graph machinery
  and the Python node cost next to gRPC.
* ``py_chain``: three such nodes in a row (the OVMS docs' increment chain), same load.
* stream: one ModelStreamInfer stream to a generative node that yields ``--tokens`` small
  tensors for one request; responses per second from the request to the last response.

Runs alternate between contenders every round so that drift hits all alike.

    python bench/bench_graphs.py --perf-analyzer /path/to/perf_analyzer [--write]
    python bench/bench_graphs.py --load-generator rest_load    # no perf_analyzer: over REST
"""

from __future__ import annotations

import json
import queue
import statistics
import sys
import tempfile
import textwrap
import time
from contextlib import ExitStack
from pathlib import Path

import bench_models
import numpy as np
import perf_bench
import perf_doc
from bench_serving import Server
from infer_request_gen import InputSpec, make_inputs
from tritonclient import grpc as triton

SECTION = "bench_graphs"
CONTENDERS = ("add_one", "py_add_one", "py_chain")

ADD_ONE_HANDLER = """
import numpy as np
from pyovms import Tensor

class OvmsPythonModel:
    def initialize(self, kwargs):
        self.output = kwargs["output_names"][0]

    def execute(self, inputs):
        return [Tensor(self.output, np.array(inputs[0]) + np.float32(1))]
"""

TOKENS_HANDLER = """
import numpy as np
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs):
        count = int(np.array(inputs[0])[0])
        token = np.zeros(1, np.int32)
        for _ in range(count):
            yield [Tensor("token", token)]
"""

OPTIONS = "[type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]"


def _node(name: str, handler: str, inputs: list[str], outputs: list[str], extra: str = "") -> str:
    lines = [f'  name: "{name}"', '  calculator: "PythonExecutorCalculator"']
    lines.append('  input_side_packet: "PYTHON_NODE_RESOURCES:py"')
    lines += [f'  input_stream: "{s}"' for s in inputs]
    lines += [f'  output_stream: "{s}"' for s in outputs]
    lines.append(f'  node_options: {{ {OPTIONS}: {{ handler_path: "{handler}" }} }}')
    return "node {\n" + "\n".join(lines) + "\n" + extra + "}\n"


def _chain(length: int) -> str:
    # MediaPipe stream names are lower case, so the graphs' tensors are "input"/"output".
    streams = ["input", *[f"step{i}" for i in range(1, length)], "output"]
    text = 'input_stream: "OVMS_PY_TENSOR:input"\noutput_stream: "OVMS_PY_TENSOR:output"\n'
    for i in range(length):
        text += _node(f"add{i}", "add_one.py", [f"IN:{streams[i]}"], [f"OUT:{streams[i + 1]}"])
    return text


TOKENS_GRAPH = (
    'input_stream: "OVMS_PY_TENSOR:count"\noutput_stream: "OVMS_PY_TENSOR:token"\n'
    + _node(
        "tokens",
        "tokens.py",
        ["IN:count", "LOOPBACK:loop"],
        ["TOKEN:token", "LOOPBACK:loop"],
        textwrap.indent(
            textwrap.dedent("""\
            input_stream_info { tag_index: "LOOPBACK:0" back_edge: true }
            input_stream_handler {
              input_stream_handler: "SyncSetInputStreamHandler"
              options { [mediapipe.SyncSetInputStreamHandlerOptions.ext] {
                sync_set { tag_index: "LOOPBACK:0" } } }
            }
            """),
            "  ",
        ),
    )
)


def write_repository(root: Path) -> tuple[Path, bench_models.BenchModel]:
    model = bench_models.build_add_one(root)
    config_path = bench_models.write_config([model], root / "config.json")
    config = json.loads(config_path.read_text())
    graphs = {"py_add_one": _chain(1), "py_chain": _chain(3), "py_tokens": TOKENS_GRAPH}
    for name, text in graphs.items():
        folder = root / name
        folder.mkdir()
        (folder / "graph.pbtxt").write_text(text)
        (folder / "add_one.py").write_text(ADD_ONE_HANDLER)
        (folder / "tokens.py").write_text(TOKENS_HANDLER)
    config["mediapipe_config_list"] = [{"name": name} for name in graphs]
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    return config_path, model


def interface(name: str, model: bench_models.BenchModel) -> tuple[tuple[InputSpec, ...], str]:
    """The contender's input specs and output name (the model's, or the graphs' own)."""
    if name == "add_one":
        return model.inputs, model.output
    return (InputSpec("input", "FP32", model.inputs[0].shape),), "output"


def check_answers(server: Server, model: bench_models.BenchModel) -> None:
    client = triton.InferenceServerClient(server.url)
    try:
        for name, added in (("add_one", 1), ("py_add_one", 1), ("py_chain", 3)):
            specs, output = interface(name, model)
            (spec,) = specs
            data = make_inputs(specs)[spec.name]
            tensor = triton.InferInput(spec.name, list(spec.shape), spec.datatype)
            tensor.set_data_from_numpy(data)
            got = client.infer(name, [tensor]).as_numpy(output)
            np.testing.assert_allclose(got, data + added, rtol=1e-6)
    finally:
        client.close()


def stream_rate(url: str, tokens: int) -> float:
    """Responses per second of one stream whose one request makes ``tokens`` responses."""
    client = triton.InferenceServerClient(url)
    answers: queue.SimpleQueue = queue.SimpleQueue()
    client.start_stream(callback=lambda result, error: answers.put(error))
    count = triton.InferInput("count", [1], "INT32")
    count.set_data_from_numpy(np.array([tokens], np.int32))
    try:
        start = time.perf_counter()
        client.async_stream_infer("py_tokens", [count])
        for _ in range(tokens):
            error = answers.get(timeout=120)
            if error is not None:
                raise SystemExit(f"stream failed: {error}")
        return tokens / (time.perf_counter() - start)
    finally:
        client.stop_stream()
        client.close()


def section(args, rates: perf_bench.Rates, stream: list[float]) -> str:
    lines = perf_bench.header("## Graphs with Python nodes (`bench/bench_graphs.py`)", args)
    lines += [
        "| concurrency | `add_one` OpenVINO model | `py_add_one` one Python node | ratio "
        "| `py_chain` three Python nodes | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for c in args.concurrency:
        model, one, chain = (statistics.median(rates[(n, c)]) for n in CONTENDERS)
        lines.append(
            f"| {c} | {model:,.0f} | {one:,.0f} | **{one / model:.2f}** "
            f"| {chain:,.0f} | {chain / model:.2f} |"
        )
    lines += [
        "",
        f"One stream, one request, a generator yielding {args.tokens:,} one-element tensors: "
        f"**{statistics.median(stream):,.0f} responses/s** (median of {len(stream)}; each "
        f"run: {', '.join(f'{r:,.0f}' for r in stream)}).",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    args = perf_bench.parse_arguments(
        __doc__,
        concurrency=[1, 4],
        extra=lambda parser: parser.add_argument("--tokens", type=int, default=20000),
        rest_load=True,
    )
    stream: list[float] = []

    def measure_stream(server: Server) -> None:
        stream.append(stream_rate(server.url, args.tokens))
        print(f"round {len(stream)} stream: {stream[-1]:,.0f}/s", file=sys.stderr)

    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_graphs-")))
        config, model = write_repository(root)
        contenders = {name: interface(name, model)[0] for name in CONTENDERS}
        rates = perf_bench.run_rounds(
            args,
            stack,
            config,
            root,
            contenders,
            lambda server: check_answers(server, model),
            between_rounds=measure_stream,
        )
    perf_doc.publish(section(args, rates, stream), SECTION, args)


if __name__ == "__main__":
    main()
