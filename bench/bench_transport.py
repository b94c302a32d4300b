"""Transport benchmark: what ovmsx's own gRPC transport buys, next to grpc.aio.

Three servers answer the same request (`--model add_one`, [1,10] FP32, by default; or
`--model identity`, [1,3,224,224] FP32, 602 KB each way), one perf_analyzer connection each,
at each concurrency, contenders alternating round by round:

* ``echo (grpc.aio)``: bench/echo_server.py, the plain Python way to write a KServe server;
* ``echo (ovmsx transport)``: the same echo on ovmsx/frontend/grpc_core.py, which polls
  gRPC's completion queue itself and answers ModelInfer on the polling thread;
* ``ovmsx``: the real server running the OpenVINO model (decode, validate, infer, encode).

The first two differ only in the transport; the last two in the model work around it.

    python bench/bench_transport.py --perf-analyzer PATH [--model identity] [--write]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import bench_models
import perf_bench
import perf_doc
from bench_serving import ECHO_SERVER, check_answer, free_port, running, start_ovmsx
from perf_analyzer_runner import run_perf_analyzer

SECTION = "bench_transport"
BUILDERS = {"add_one": bench_models.build_add_one, "identity": bench_models.build_identity}
CONTENDERS = ("echo (grpc.aio)", "echo (ovmsx transport)", "ovmsx")


def _start(name: str, model: bench_models.BenchModel, config: Path, root: Path, args):
    if name == "ovmsx":
        return start_ovmsx(args.ovmsx.split(), config, root)
    port = free_port()
    transport = "aio" if "aio" in name else "core"
    command = [sys.executable, str(ECHO_SERVER), "--port", str(port), "--transport", transport]
    for spec in model.inputs:
        command += ["--input", str(spec)]
    return running(name, command, port, root / f"echo_{transport}.log")


def main() -> None:
    args = perf_bench.parse_arguments(__doc__, concurrency=[1, 4], extra=_model_argument)
    rates: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_transport-") as tmp, ExitStack() as stack:
        root = Path(tmp)
        model = BUILDERS[args.model](root)
        config = bench_models.write_config([model], root / "config.json")
        servers = {name: stack.enter_context(_start(name, model, config, root, args))
                   for name in CONTENDERS}  # fmt: skip
        check_answer(servers["ovmsx"], model)
        for round_number in range(args.rounds):
            order = CONTENDERS if round_number % 2 == 0 else CONTENDERS[::-1]
            for name in order:
                results = run_perf_analyzer(
                    args.perf_analyzer,
                    servers[name].url,
                    model.name,
                    model.inputs,
                    args.concurrency,
                    args.measurement_ms,
                    stability_percent=args.stability,
                )
                for result in results:
                    key = (name, result.concurrency)
                    rates.setdefault(key, []).append(result.throughput_infer_per_s)
                print(f"round {round_number + 1} {name}: {results}", file=sys.stderr)
    perf_doc.publish(_section(args, rates), f"{SECTION}_{args.model}", args)


def _model_argument(parser) -> None:
    parser.add_argument("--model", choices=sorted(BUILDERS), default="add_one")


def _section(args, rates) -> str:
    title = (
        f"## The gRPC transport, `{args.model}` (`bench/bench_transport.py --model {args.model}`)"
    )
    lines = perf_bench.header(title, args)
    lines += [
        f"| concurrency | echo (grpc.aio) | echo (ovmsx transport) | ovmsx `{args.model}` | "
        "ovmsx / echo (grpc.aio) | ovmsx / echo (ovmsx transport) |",
        "|---|---|---|---|---|---|",
    ]
    for c in args.concurrency:
        aio, core, ovmsx = (statistics.median(rates[(n, c)]) for n in CONTENDERS)
        lines.append(
            f"| {c} | {aio:,.0f} | {core:,.0f} | {ovmsx:,.0f} | **{ovmsx / aio:.2f}** "
            f"| {ovmsx / core:.2f} |"
        )
    every = "; ".join(
        f"{name} c={c}: " + ", ".join(f"{r:,.0f}" for r in rates[(name, c)])
        for name in CONTENDERS
        for c in args.concurrency
    )
    lines += ["", f"Every round: {every}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
