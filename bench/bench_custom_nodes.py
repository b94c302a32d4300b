"""Custom-node benchmark: the cost of one custom-node call, and a pipeline over gRPC.

* In-process: the built-in ``add_one`` custom node on a [1,10] FP32 tensor, called through
  ``ovmsx._core.CustomNode.execute`` (the path pipelines use: build the C structs, release the
  GIL, call the library, validate its outputs, wrap them as zero-copy Tensors). Median of
  ``--repeats`` timed batches of ``--calls`` calls each.
* Over gRPC with perf_analyzer (the load generator of bench_serving.py): a pipeline
  ``add_one`` model → ``add_one`` custom node against the same model alone, at each
  concurrency, contenders alternating over ``--rounds`` rounds.

    python bench/bench_custom_nodes.py --perf-analyzer /path/to/perf_analyzer [--write]
    python bench/bench_custom_nodes.py --load-generator rest_load   # no perf_analyzer: REST
"""

from __future__ import annotations

import datetime
import json
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import bench_models
import numpy as np
import perf_bench
import perf_doc
from tritonclient import grpc as triton

import ovmsx.custom_nodes
from ovmsx import _core

SECTION = "bench_custom_nodes"
CONTENDERS = ("add_one", "model_then_node")


def per_call_us(calls: int, repeats: int) -> list[float]:
    library = _core.CustomNodeLibrary.load(str(ovmsx.custom_nodes.built_in("add_one")))
    node = library.initialize({"add_number": "1", "sub_number": "0"})
    tensor = _core.Tensor("input_numbers", np.zeros((1, 10), np.float32))
    inputs = [tensor]
    for _ in range(1000):  # warm the library's buffer pool and the allocator
        node.execute(inputs)
    batches = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            node.execute(inputs)
        batches.append((time.perf_counter() - start) / calls * 1e6)
    node.close()
    return batches


def write_repository(root: Path) -> tuple[Path, bench_models.BenchModel]:
    model = bench_models.build_add_one(root)
    config_path = bench_models.write_config([model], root / "config.json")
    config = json.loads(config_path.read_text())
    config["custom_node_library_config_list"] = [
        {"name": "add_one_node", "base_path": str(ovmsx.custom_nodes.built_in("add_one"))}
    ]
    (spec,) = model.inputs
    config["pipeline_config_list"] = [
        {
            "name": "model_then_node",
            "inputs": [spec.name],
            "nodes": [
                {
                    "name": "model",
                    "type": "DL model",
                    "model_name": model.name,
                    "inputs": [{spec.name: {"node_name": "request", "data_item": spec.name}}],
                    "outputs": [{"data_item": model.output, "alias": "model_out"}],
                },
                {
                    "name": "node",
                    "type": "custom",
                    "library_name": "add_one_node",
                    "params": {"add_number": "1"},
                    "inputs": [{"input_numbers": {"node_name": "model", "data_item": "model_out"}}],
                    "outputs": [{"data_item": "output_numbers", "alias": "node_out"}],
                },
            ],
            "outputs": [{model.output: {"node_name": "node", "data_item": "node_out"}}],
        }
    ]
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    return config_path, model


def check_answers(url: str, model: bench_models.BenchModel) -> None:
    (spec,) = model.inputs
    data = np.random.default_rng(0).standard_normal(spec.shape).astype(np.float32)
    with triton.InferenceServerClient(url) as client:
        for name, added in (("add_one", 1), ("model_then_node", 2)):
            given = triton.InferInput(spec.name, list(spec.shape), spec.datatype)
            given.set_data_from_numpy(data)
            got = client.infer(name, [given]).as_numpy(model.output)
            np.testing.assert_allclose(got, data + added, rtol=1e-6)


def section(args, calls: list[float], rates: dict[tuple[str, int], list[float]]) -> str:
    lines = [
        "## Custom nodes (`bench/bench_custom_nodes.py`)",
        "",
        f"{datetime.date.today().isoformat()}; {perf_doc.machine(['openvino', 'grpcio'])}.",
        "",
        f"One call of the built-in `add_one` custom node on [1,10] FP32, in-process through "
        f"`CustomNode.execute`: **{statistics.median(calls):.2f} µs** (median of "
        f"{len(calls)} batches of {args.calls:,} calls; batches ranged "
        f"{min(calls):.2f} to {max(calls):.2f} µs). Target: ≤ 5 µs.",
        "",
        perf_bench.load_line(args),
        "",
        "| concurrency | `add_one` model alone | pipeline: model → `add_one` custom node | ratio |",
        "|---|---|---|---|",
    ]
    for c in args.concurrency:
        alone = statistics.median(rates[("add_one", c)])
        piped = statistics.median(rates[("model_then_node", c)])
        lines.append(f"| {c} | {alone:,.0f} | {piped:,.0f} | **{piped / alone:.2f}** |")
    return "\n".join(lines) + "\n"


def main() -> None:
    def extra(parser) -> None:
        parser.add_argument("--calls", type=int, default=100_000)
        parser.add_argument("--repeats", type=int, default=7)

    args = perf_bench.parse_arguments(__doc__, concurrency=[4], extra=extra, rest_load=True)
    calls = per_call_us(args.calls, args.repeats)
    print(f"in-process call: {statistics.median(calls):.2f} µs", file=sys.stderr)
    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_cn-")))
        config, model = write_repository(root)
        contenders = dict.fromkeys(CONTENDERS, model.inputs)
        rates = perf_bench.run_rounds(
            args, stack, config, root, contenders, lambda server: check_answers(server.url, model)
        )
    perf_doc.publish(section(args, calls, rates), SECTION, args)


if __name__ == "__main__":
    main()
