"""Serving benchmark: ovmsx over KServe v2 gRPC, measured with Triton's perf_analyzer.

Two comparisons, each made with the same client in the same run:

* ``add_one`` ([1,10] FP32) and ``identity`` ([1,3,224,224] FP32, 602 KB): ovmsx against a bare
  grpc.aio echo server (bench/echo_server.py). The echo server does nothing but the gRPC and
  protobuf round trip, written the plain Python way, so ovmsx/echo shows what serving a model
  costs on top of that (above 1: ovmsx's request path is leaner than plain Python protobuf).
* ``ocr_det`` (PaddleOCR v4 text detector, a real CNN): ovmsx against OpenVINO's own
  benchmark_app on the same model file, device, hint, input shape and number of requests.

Run from the repository root (needs ``pip install '.[bench]'`` and a perf_analyzer binary)::

    python bench/bench_serving.py --perf-analyzer /path/to/perf_analyzer --write
    python bench/bench_serving.py --only echo      # the harness alone, no ovmsx
    python bench/bench_serving.py --measurement-ms 10000 --rounds 3   # slower, steadier

Servers are started once on free loopback ports and stay up; runs alternate between them
(echo, ovmsx, then ovmsx, echo in the next round) so that drift hits both alike. Each server's
answer is checked with tritonclient before it is timed, because perf_analyzer's dynamic_grpc
mode does not look at replies. With ``--write``, a full run writes docs/performance.md between
the ``bench_serving:begin``/``end`` markers; without it, and with ``--only``, the table is only
printed.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import bench_models
import numpy as np
import perf_doc
from bench_models import BenchModel
from benchmark_app_runner import BenchmarkAppResult, run_benchmark_app
from infer_request_gen import make_inputs
from inprocess_runner import run_inprocess
from perf_analyzer_runner import Result, require_perf_analyzer, run_perf_analyzer
from tritonclient import grpc as triton
from tritonclient.utils import InferenceServerException

SECTION = "bench_serving"
SERVERS = ("echo", "ovmsx")
ECHO_MODELS = ("add_one", "identity")
ECHO_SERVER = Path(__file__).resolve().parent / "echo_server.py"
READY_TIMEOUT_S = 300  # ovmsx compiles every model before it reports ready


@dataclass(frozen=True)
class Server:
    name: str
    url: str
    process: subprocess.Popen
    log: Path


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and all its threads (Linux /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(server: Server) -> None:
    client = triton.InferenceServerClient(server.url)
    deadline = time.monotonic() + READY_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                tail = server.log.read_text(errors="replace")[-3000:]
                raise SystemExit(f"{server.name} exited with {server.process.returncode}:\n{tail}")
            try:
                if client.is_server_ready():
                    return
            except InferenceServerException:
                pass  # not listening yet
            time.sleep(0.2)
    finally:
        client.close()
    raise SystemExit(f"{server.name} not ready after {READY_TIMEOUT_S} s; see {server.log}")


def wait_http_ready(process: subprocess.Popen, url: str, name: str, log: Path) -> None:
    """Until ``url`` answers a GET with success; a process that exits first, or no answer
    within READY_TIMEOUT_S, raises naming ``log``."""
    import urllib.request

    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            with urllib.request.urlopen(url):
                return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"{name} did not start: see {log}") from None
            time.sleep(0.2)


@contextmanager
def running(name: str, command: Sequence[str], port: int, log: Path) -> Iterator[Server]:
    """Start ``command`` (already told to listen on ``port``); stop it on exit."""
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    server = Server(name, f"127.0.0.1:{port}", process, log)
    try:
        wait_ready(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_echo(model: BenchModel, root: Path) -> AbstractContextManager[Server]:
    port = free_port()
    command = [sys.executable, str(ECHO_SERVER), "--port", str(port)]
    for spec in model.inputs:
        command += ["--input", str(spec)]
    return running("echo", command, port, root / f"echo_{model.name}.log")


def start_ovmsx(command: Sequence[str], config: Path, root: Path) -> AbstractContextManager[Server]:
    port = free_port()
    # OVMS's own flags; binding 127.0.0.1 avoids the IPv6 fallback the OVMS tuning guide warns of.
    flags = ["--config_path", str(config), "--port", str(port), "--grpc_bind_address", "127.0.0.1"]
    return running("ovmsx", [*command, *flags], port, root / "ovmsx.log")


def check_answer(server: Server, model: BenchModel) -> None:
    """Send the benchmark's request once with tritonclient and compare the answer."""
    inputs = make_inputs(model.inputs)
    request = []
    for spec in model.inputs:
        tensor = triton.InferInput(spec.name, list(spec.shape), spec.datatype)
        tensor.set_data_from_numpy(inputs[spec.name])
        request.append(tensor)
    # The echo server answers each input under its own name; ovmsx runs the model.
    if server.name == "echo":
        wanted = {spec.name: inputs[spec.name] for spec in model.inputs}
    else:
        wanted = {model.output: bench_models.expected_output(model, inputs)}
    outputs = [triton.InferRequestedOutput(name) for name in wanted]
    client = triton.InferenceServerClient(server.url)
    try:
        result = client.infer(model.name, request, outputs=outputs)
    finally:
        client.close()
    for name, expected in wanted.items():
        got = result.as_numpy(name)
        # bf16/fp32 kernels may order sums differently from a local run; the check is that
        # the right model ran on the right data, not bit equality.
        if got is None or got.shape != expected.shape or not np.allclose(got, expected, atol=2e-2):
            raise SystemExit(f"{server.name} answered {model.name}/{name} wrongly: {got!r}")


def median_result(results: list[Result]) -> Result:
    def med(field: str) -> float:
        return statistics.median(getattr(r, field) for r in results)

    return Result(
        results[0].concurrency,
        med("throughput_infer_per_s"),
        med("p50_us"),
        med("p99_us"),
        med("avg_us"),
    )


def fmt_rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def fmt_us(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def ratio(num: float | None, den: float | None) -> str:
    return "—" if num is None or not den else f"{num / den:.2f}"


def echo_table(
    cells: dict[tuple[str, str, int], Result],
    cpu: dict[tuple[str, str, int], float],
    concurrency: list[int],
) -> str:
    lines = [
        "| Model | Concurrency | echo infer/s | ovmsx infer/s | ovmsx / echo "
        "| echo p50 µs | ovmsx p50 µs | echo p99 µs | ovmsx p99 µs "
        "| echo CPU µs/req | ovmsx CPU µs/req |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model in ECHO_MODELS:
        for c in concurrency:
            e, o = cells.get((model, "echo", c)), cells.get((model, "ovmsx", c))
            if not (e or o):
                continue
            echo_rate, ovmsx_rate = (r and r.throughput_infer_per_s for r in (e, o))
            lines.append(
                f"| `{model}` | {c} | {fmt_rate(echo_rate)} | {fmt_rate(ovmsx_rate)} "
                f"| {ratio(ovmsx_rate, echo_rate)} "
                f"| {fmt_us(e and e.p50_us)} | {fmt_us(o and o.p50_us)} "
                f"| {fmt_us(e and e.p99_us)} | {fmt_us(o and o.p99_us)} "
                f"| {fmt_us(cpu.get((model, 'echo', c)))} "
                f"| {fmt_us(cpu.get((model, 'ovmsx', c)))} |"
            )
    return "\n".join(lines)


def cnn_table(
    cells: dict[tuple[str, str, int], Result],
    apps: dict[int, BenchmarkAppResult],
    inprocess: dict[int, float],
) -> str:
    lines = [
        "| Concurrency = `-nireq` | benchmark_app infer/s | ovmsx over gRPC infer/s "
        "| ovmsx / benchmark_app | ovmsx in-process infer/s | in-process / benchmark_app "
        "| benchmark_app median ms | ovmsx p50 ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c, app in sorted(apps.items()):
        o = cells.get(("ocr_det", "ovmsx", c))
        rate = o and o.throughput_infer_per_s
        local = inprocess.get(c)
        p50 = "—" if o is None else f"{o.p50_us / 1000:.1f}"
        lines.append(
            f"| {c} | {fmt_rate(app.throughput_fps)} | {fmt_rate(rate)} "
            f"| {ratio(rate, app.throughput_fps)} | {fmt_rate(local)} "
            f"| {ratio(local, app.throughput_fps)} | {app.median_ms:.1f} | {p50} |"
        )
    return "\n".join(lines)


def cnn_notes(args, apps: dict[int, BenchmarkAppResult]) -> list[str]:
    c, app = max(apps.items())
    hint = bench_models.PLUGIN_CONFIG["PERFORMANCE_HINT"]
    # Name the model by file name: the cache directory is this machine's business.
    command = [Path(arg).name if arg.endswith(".onnx") else arg for arg in app.command[1:]]
    notes = [
        f"- Same ONNX file, CPU, `PERFORMANCE_HINT` {hint} ({app.num_streams} stream(s), "
        f"inference precision {app.inference_precision}), same static input shape. ovmsx has "
        f"`nireq` {bench_models.NIREQ}; benchmark_app runs asynchronously with `-nireq` equal to "
        f"the client concurrency, for {args.benchmark_app_seconds} s, with "
        "`-inference_only=false` (it refills the input tensors every iteration, as a server "
        "gets new data with every request). The command for the last row: "
        f"`benchmark_app {shlex.join(command)}`.",
        "- *ovmsx in-process* runs the server's own path for a ModelInfer (what the gRPC "
        "transport calls: read and check the serialized request, infer through the C++ pool "
        "straight into the response) with no network (bench/inprocess_runner.py): the gap "
        "between it and *over gRPC* is the transport, which benchmark_app does not have.",
    ]
    # Little's law: with c requests always in flight, mean latency = c / throughput. A reported
    # median far below that leaves out the time a request waits for a free stream.
    if c > 1 and app.median_ms < 0.8 * c / app.throughput_fps * 1000:
        notes.append(
            f"- benchmark_app's latency at `-nireq` {c} ({app.median_ms:.1f} ms) is below "
            f"{c} / throughput ({c / app.throughput_fps * 1000:.1f} ms): it leaves out the time a "
            "request waits for a free stream, while ovmsx's p50 is the whole round trip as the "
            "client sees it. Compare throughputs there."
        )
    return notes


def section(args, cells, cpu, apps, inprocess, models: dict[str, BenchModel]) -> str:
    packages = ("grpcio", "protobuf", "openvino", "tritonclient", "ovmsx")
    parts = [
        "## Serving: ovmsx over gRPC vs a bare echo server and vs benchmark_app",
        "",
        f"Measured {datetime.date.today().isoformat()} on {perf_doc.machine(packages)}.",
        "Rerun with `python bench/bench_serving.py --perf-analyzer PATH --write`.",
        "",
        "**Server overhead: tiny models, ovmsx against a bare grpc.aio KServe v2 echo server**",
        "",
        echo_table(cells, cpu, args.concurrency),
    ]
    if apps:
        shape = "x".join(map(str, models["ocr_det"].inputs[0].shape))
        parts += [
            "",
            f"**A real CNN: PaddleOCR v4 text detector (`{bench_models.RAPIDOCR}` wheel), "
            f"input {shape} FP32, ovmsx over gRPC against OpenVINO `benchmark_app`**",
            "",
            cnn_table(cells, apps, inprocess),
        ]
    parts += [
        "",
        "- Client: Triton `perf_analyzer --service-kind=dynamic_grpc`, synchronous requests, one "
        "pre-serialized `ModelInferRequest` with raw FP32 inputs (bench/infer_request_gen.py), "
        f"{args.measurement_ms} ms windows repeated until three agree within "
        f"{args.stability:g} %. Median of {args.rounds} round(s); within a round the contenders "
        "run back to back, in alternating order from round to round.",
        f"- Client and servers share the machine's {os.cpu_count()} logical CPUs: "
        "perf_analyzer's own CPU time is part of every figure, equally for both servers.",
        "- Echo server: grpc.aio with generic handlers over the generated message classes, "
        "returning inputs as outputs and `raw_input_contents` as `raw_output_contents`; the "
        "same gRPC options (1 GiB send/receive limits, as OVMS) and malloc thresholds as ovmsx.",
        "- *CPU µs/req*: the server process's CPU time (all its threads, from /proc) during the "
        "perf_analyzer run, divided by the requests it served.",
        "- Every server's answer was checked with tritonclient before timing. 1-minute load "
        f"average when the run started: {args.load_before:.2f} (well above 0 means other work "
        "shared the CPUs).",
        *(cnn_notes(args, apps) if apps else []),
    ]
    return "\n".join(parts)


class Measurements:
    """Every timed run, collected by (model, contender, concurrency)."""

    def __init__(self, args, servers: dict[tuple[str, str], Server], models) -> None:
        self.args, self.servers, self.models = args, servers, models
        self.runs: dict[tuple[str, str, int], list[Result]] = defaultdict(list)
        self.apps: dict[int, list[BenchmarkAppResult]] = defaultdict(list)
        self.inprocess: dict[int, list[float]] = defaultdict(list)
        self.cpu_us: dict[tuple[str, str, int], list[float]] = defaultdict(list)

    def run(self, model: str, contender: str, c: int) -> None:
        print(f"  {model} c={c} {contender}", file=sys.stderr)
        spec = self.models[model]
        if contender == "inprocess":
            seconds = self.args.benchmark_app_seconds
            self.inprocess[c].append(run_inprocess(self.args.config, spec, c, seconds))
            return
        if contender == "benchmark_app":
            self.apps[c].append(
                run_benchmark_app(
                    bench_models.fetch_ocr_det(self.args.cache_dir),
                    binary=self.args.benchmark_app,
                    hint=bench_models.PLUGIN_CONFIG["PERFORMANCE_HINT"].lower(),
                    nireq=c,
                    shape=spec.reshape,
                    seconds=self.args.benchmark_app_seconds,
                )
            )
            return
        server = self.servers[(model, contender)]
        cpu_before, wall_before = process_cpu_seconds(server.process.pid), time.monotonic()
        (result,) = run_perf_analyzer(
            self.args.perf_analyzer,
            server.url,
            model,
            spec.inputs,
            [c],
            self.args.measurement_ms,
            stability_percent=self.args.stability,
        )
        self.runs[(model, contender, c)].append(result)
        # perf_analyzer spends nearly all of its run in measurement windows at a steady rate,
        # so CPU share / throughput approximates the server's CPU per request.
        cpu_share = (process_cpu_seconds(server.process.pid) - cpu_before) / (
            time.monotonic() - wall_before
        )
        self.cpu_us[(model, contender, c)].append(1e6 * cpu_share / result.throughput_infer_per_s)

    def all(self, with_cnn: bool) -> None:
        plan = [(m, [s for s in SERVERS if (m, s) in self.servers]) for m in ECHO_MODELS]
        if with_cnn:
            plan.append(("ocr_det", ["ovmsx", "benchmark_app", "inprocess"]))
        for model, contenders in plan:
            for c in self.args.concurrency:
                for round_ in range(self.args.rounds):
                    for contender in contenders if round_ % 2 == 0 else contenders[::-1]:
                        self.run(model, contender, c)

    def cells(self) -> dict[tuple[str, str, int], Result]:
        return {key: median_result(results) for key, results in self.runs.items()}

    def cpu_per_request(self) -> dict[tuple[str, str, int], float]:
        return {key: statistics.median(values) for key, values in self.cpu_us.items()}

    def inprocess_rates(self) -> dict[int, float]:
        return {c: statistics.median(rates) for c, rates in self.inprocess.items()}

    def benchmark_app(self) -> dict[int, BenchmarkAppResult]:
        # The run with the median throughput, so that its latency and settings come with it.
        return {
            c: sorted(runs, key=lambda r: r.throughput_fps)[(len(runs) - 1) // 2]
            for c, runs in self.apps.items()
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--perf-analyzer", default="perf_analyzer", metavar="PATH")
    parser.add_argument("--benchmark-app", default="benchmark_app", metavar="PATH")
    parser.add_argument("--ovmsx", default="ovmsx", help="command that starts ovmsx")
    parser.add_argument("--only", choices=SERVERS, help="measure one server (printed only)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--measurement-ms", type=int, default=3000)
    parser.add_argument("--stability", type=float, default=20.0, help="percent, see perf_analyzer")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--benchmark-app-seconds", type=int, default=10)
    parser.add_argument("--no-cnn", action="store_true", help="skip ocr_det and benchmark_app")
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "ovmsx-bench")
    perf_doc.add_write_arguments(parser)
    args = parser.parse_args()
    if args.only and args.write:
        parser.error("--only measures one server, which is not a section: leave out --write")
    args.perf_analyzer = require_perf_analyzer(args.perf_analyzer)
    args.load_before = os.getloadavg()[0]
    wanted = [args.only] if args.only else list(SERVERS)
    with_cnn = "ovmsx" in wanted and not args.no_cnn

    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_serving-")))
        built = [bench_models.build_add_one(root), bench_models.build_identity(root)]
        if with_cnn:
            built.append(bench_models.build_ocr_det(root, args.cache_dir))
        models = {m.name: m for m in built}
        servers: dict[tuple[str, str], Server] = {}
        if "echo" in wanted:
            for name in ECHO_MODELS:
                servers[(name, "echo")] = stack.enter_context(start_echo(models[name], root))
        if "ovmsx" in wanted:
            config = args.config = bench_models.write_config(built, root / "config.json")
            ovmsx = stack.enter_context(start_ovmsx(shlex.split(args.ovmsx), config, root))
            for name in models:
                servers[(name, "ovmsx")] = ovmsx
        for (name, _), server in servers.items():
            check_answer(server, models[name])
        print(f"answers checked; measuring ({args.measurement_ms} ms windows)", file=sys.stderr)
        measurements = Measurements(args, servers, models)
        measurements.all(with_cnn)

    text = section(
        args,
        measurements.cells(),
        measurements.cpu_per_request(),
        measurements.benchmark_app(),
        measurements.inprocess_rates(),
        models,
    )
    perf_doc.publish(text, SECTION, args)


if __name__ == "__main__":
    main()
