"""What a request costs in CPU, server and client, and the ceiling that sets for any server.

On a small host the load generator shares the CPUs with the server, so a ratio between two
servers is bounded by what the client itself costs: with every CPU busy, the machine answers at
most ``CPUs / (server CPU per request + client CPU per request)``, and at concurrency 1 a request
takes at least the client's own time per request plus the server's. This benchmark measures both
costs for ovmsx and the peers on the same models, one perf_analyzer (``dynamic_grpc``, one
connection) per run, and for the CNN also OpenVINO's own cost per inference (benchmark_app with
the THROUGHPUT hint, every CPU busy): a lower bound on any server's CPU per CNN request.

    python bench/bench_costs.py --perf-analyzer PATH [--peers kserve] \
        [--models identity,ocr_det] [--write]

Each server serves every model of the run at once, as bench_peers.py starts them (a peer that
loads OpenVINO for the CNN is, as measured, faster on the other models too). CPU is sampled over
the middle of each run's measurement, from /proc for the server's process tree and from the
perf_analyzer process itself. Not part of CI, and imported by no test.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import bench_models
import perf_bench
import perf_doc
from bench_peers import PEERS, Expectations, _names, build_models, check_answer, start_server
from bench_serving import Server, process_cpu_seconds
from bench_workers import server_cpu_seconds
from benchmark_app_runner import run_benchmark_app
from peers import setup_peers
from peers.contenders import Contender, row_contenders
from perf_analyzer_runner import input_data_json, parse_csv, perf_analyzer_command

SECTION = "bench_costs"
ROWS = ("add_one", "identity", "ocr_det")
BENCHMARK_APP_SECONDS = 15


@dataclass(frozen=True)
class Cost:
    rate: float  # infer/s, perf_analyzer's figure for its stable windows
    server_us: float  # server CPU per request (all its processes and threads)
    client_us: float  # perf_analyzer CPU per request

    def ceiling(self, cpus: int) -> float:
        """Requests/s with every CPU busy at these costs."""
        return cpus * 1e6 / (self.server_us + self.client_us)


def measure(
    perf_analyzer: str, server: Server, contender: Contender, c: int, window_ms: int, tmp: Path
) -> Cost:
    """One perf_analyzer run of three ``window_ms`` windows; CPU is sampled over the middle one."""
    data = tmp / "input.json"
    data.write_text(input_data_json(contender.model, [contender.input], seed=1))
    out = tmp / "result.csv"
    out.unlink(missing_ok=True)
    # A 100 % stability bar: the first three windows agree, so the run lasts three windows.
    command = perf_analyzer_command(
        perf_analyzer, server.url, contender.model, data, c, window_ms, out,
        stability_percent=100, max_trials=3,
    )  # fmt: skip
    client = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.5 * window_ms / 1000)  # start-up and the first window
    server_before = server_cpu_seconds(server)
    client_before = process_cpu_seconds(client.pid)
    started = time.monotonic()
    time.sleep(window_ms / 1000)
    server_cpu = server_cpu_seconds(server) - server_before
    client_cpu = process_cpu_seconds(client.pid) - client_before
    wall = time.monotonic() - started
    _, errors = client.communicate()
    if client.returncode != 0 or not out.exists():
        raise SystemExit(f"perf_analyzer failed on {contender.column}: {errors.decode()[-2000:]}")
    rate = parse_csv(out)[0].throughput_infer_per_s
    answered = rate * wall
    return Cost(rate, 1e6 * server_cpu / answered, 1e6 * client_cpu / answered)


def inference_cost(model: bench_models.BenchModel) -> tuple[float, float]:
    """(infer/s, CPU ms per inference) of OpenVINO alone, every CPU busy (benchmark_app)."""
    result = run_benchmark_app(
        model.model_file,
        hint="throughput",
        nireq=bench_models.NIREQ,
        shape=model.reshape,
        seconds=BENCHMARK_APP_SECONDS,
    )
    return result.throughput_fps, 1e3 * (os.cpu_count() or 1) / result.throughput_fps


def main() -> None:
    def options(parser) -> None:
        parser.add_argument("--peers", default="kserve", help="comma-separated")
        parser.add_argument("--models", default="identity,ocr_det", help="comma-separated")
        parser.add_argument("--peers-dir", type=Path, default=setup_peers.DEFAULT_CACHE)
        parser.add_argument(
            "--cache-dir", type=Path, default=Path.home() / ".cache" / "ovmsx-bench"
        )
        parser.set_defaults(rounds=2)

    args = perf_bench.parse_arguments(__doc__, concurrency=[1, 4], extra=options)
    peers = _names(args.peers, PEERS, "peers")
    rows = _names(args.models, ROWS, "models")
    costs: dict[tuple[str, str, int], list[Cost]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="bench_costs-") as tmp, ExitStack() as stack:
        root = Path(tmp)
        bench = build_models(rows, root / "models", args.cache_dir)
        # First, before any server runs beside it.
        inference = inference_cost(bench["ocr_det"]) if "ocr_det" in rows else None
        expect = Expectations(bench)
        servers = {
            name: stack.enter_context(start_server(args, name, bench, root / name, graph=False))
            for name in ("ovmsx", *peers)
        }
        plan = {row: row_contenders(row, peers, bench) for row in rows}
        for contenders in plan.values():
            for contender in contenders:
                check_answer(servers[contender.server], contender, *expect(contender))
        for round_number in range(args.rounds):
            for row, contenders in plan.items():
                order = contenders if round_number % 2 == 0 else contenders[::-1]
                for c in args.concurrency:
                    for contender in order:
                        print(f"  {row} c={c} {contender.column}", file=sys.stderr)
                        server = servers[contender.server]
                        window = args.measurement_ms
                        cost = measure(args.perf_analyzer, server, contender, c, window, root)
                        costs[(row, contender.column, c)].append(cost)
                        print(f"    {cost}", file=sys.stderr)
    perf_doc.publish(section(args, rows, plan, costs, inference), SECTION, args)


def median_cost(found: list[Cost]) -> Cost:
    return Cost(
        statistics.median(c.rate for c in found),
        statistics.median(c.server_us for c in found),
        statistics.median(c.client_us for c in found),
    )


def section(args, rows, plan, costs, inference) -> str:
    cpus = os.cpu_count() or 1
    lines = perf_bench.header(
        "## What a request costs, and the ceiling it sets (`bench/bench_costs.py`)", args
    )
    lines += [
        "| model | c | server | infer/s | server CPU µs/req | client CPU µs/req | "
        f"ceiling with {cpus} CPUs busy, infer/s |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        for c in args.concurrency:
            for contender in plan[row]:
                cost = median_cost(costs[(row, contender.column, c)])
                lines.append(
                    f"| `{row}` | {c} | {contender.column} | {cost.rate:,.1f} | "
                    f"{cost.server_us:,.0f} | {cost.client_us:,.0f} | {cost.ceiling(cpus):,.1f} |"
                )
    lines += [
        "",
        "- *server CPU*: CPU time of the server's process tree (all threads, from /proc) over "
        f"one {args.measurement_ms} ms window in the middle of the run, per request answered "
        "in it; *client CPU*: the same for the perf_analyzer process. *ceiling*: the CPUs "
        "divided by the two costs together: the most requests/s this machine could answer at "
        "these costs.",
    ]
    if inference is not None:
        fps, cpu_ms = inference
        lines.append(
            f"- OpenVINO alone on the CNN (benchmark_app, THROUGHPUT hint, {cpus} CPUs busy): "
            f"{fps:,.1f} infer/s, so at least {cpu_ms:,.1f} ms of CPU per inference, whatever "
            "serves it."
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
