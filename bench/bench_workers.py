"""``--grpc_workers``: one ovmsx process against several on one port, over one client connection
and over several.

perf_analyzer's ``dynamic_grpc`` sends all of its concurrent requests over one HTTP/2 connection,
and the kernel hands each connection to one serving process: more processes can only help
clients that open more connections. So each server is measured twice on ``add_one`` ([1,10]
FP32, the serving benchmark's model and config): with one perf_analyzer (one connection,
concurrency C), and with K perf_analyzers started together (K connections, concurrency C each;
their throughputs summed).

    python bench/bench_workers.py --perf-analyzer PATH
    python bench/bench_workers.py --perf-analyzer PATH --rounds 1 --measurement-ms 1000

Both servers stay up for the whole run and are measured alternately, in reversed order every
other round. Each answer is checked with tritonclient first (dynamic_grpc ignores replies).
With ``--write``, the run rewrites the ``bench_workers`` section of docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import bench_models
import perf_doc
from bench_models import BenchModel
from bench_serving import Server, check_answer, fmt_us, process_cpu_seconds, ratio, start_ovmsx
from perf_analyzer_runner import require_perf_analyzer, run_perf_analyzer

SECTION = "bench_workers"
READY_TIMEOUT_S = 120
# Every perf_analyzer of a run measures the same three windows: with a 1000 % stability bar the
# first three agree, so K clients started together also stop together and their windows
# overlap (a client still measuring after the others stopped would flatter the sum).
STABILITY_PERCENT = 1000.0
TRIALS = 3


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--perf-analyzer", default="perf_analyzer", metavar="PATH")
    parser.add_argument("--ovmsx", default="ovmsx", help="command that starts ovmsx")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--clients", type=int, default=4, help="connections in the wide run")
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight per client")
    parser.add_argument("--measurement-ms", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    perf_doc.add_write_arguments(parser)
    args = parser.parse_args()
    args.perf_analyzer = require_perf_analyzer(args.perf_analyzer)
    args.load_before = os.getloadavg()[0]
    return args


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # gone meanwhile
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def wait_all_serving(server: Server, workers: int) -> None:
    """A supervisor reports ready with its first worker; wait until every worker serves."""
    if workers == 1:
        return
    deadline = time.monotonic() + READY_TIMEOUT_S
    while f"all {workers} workers serving" not in server.log.read_text(errors="replace"):
        if time.monotonic() > deadline or server.process.poll() is not None:
            raise SystemExit(f"{workers} workers not serving; see {server.log}")
        time.sleep(0.2)


def machine_busy_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine since boot (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def connection_split(port: int, pids: list[int]) -> str:
    """How the established connections to ``port`` are spread over ``pids``, e.g. "3/1": the
    kernel picks a process per connection by hashing its addresses, so K connections need not
    split evenly over the workers."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                inodes.add(f"socket:[{fields[9]}]")
    counts = []
    for pid in pids:
        held = 0
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                held += os.readlink(fd) in inodes
            except OSError:
                continue  # closed meanwhile
        counts.append(held)
    return "/".join(map(str, sorted(counts, reverse=True)))


def clients_cpu_seconds() -> float:
    """CPU time of this script's finished children: the perf_analyzers of the runs so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def server_cpu_seconds(server: Server) -> float:
    """CPU time of the server's process and its workers (all threads)."""
    pids = [server.process.pid, *children(server.process.pid)]
    return sum(process_cpu_seconds(pid) for pid in pids)


class Measurements:
    def __init__(self, args: argparse.Namespace, model: BenchModel) -> None:
        self.args, self.model = args, model
        self.rates: dict[tuple[int, int], list[float]] = defaultdict(list)
        self.cpu_us: dict[tuple[int, int], list[float]] = defaultdict(list)
        self.client_us: dict[tuple[int, int], list[float]] = defaultdict(list)
        self.busy: dict[tuple[int, int], list[float]] = defaultdict(list)
        self.splits: dict[tuple[int, int], list[str]] = defaultdict(list)

    def run(self, server: Server, workers: int, clients: int) -> None:
        print(f"  {workers} worker(s), {clients} client(s)", file=sys.stderr)
        args = self.args

        def one_client(_: int) -> float:
            (result,) = run_perf_analyzer(
                args.perf_analyzer,
                server.url,
                self.model.name,
                self.model.inputs,
                [args.concurrency],
                args.measurement_ms,
                stability_percent=STABILITY_PERCENT,
                max_trials=TRIALS,
            )
            return result.throughput_infer_per_s

        cpu_before, wall_before = server_cpu_seconds(server), time.monotonic()
        clients_before = clients_cpu_seconds()
        busy_before, total_before = machine_busy_ticks()
        with ThreadPoolExecutor(clients) as pool:
            rates = pool.map(one_client, range(clients))
            if workers > 1:
                time.sleep(args.measurement_ms / 1000)  # every client connected by now
                port = int(server.url.rsplit(":", 1)[1])
                split = connection_split(port, children(server.process.pid))
                self.splits[(workers, clients)].append(split)
            rate = sum(rates)
        wall = time.monotonic() - wall_before
        cpu_share = (server_cpu_seconds(server) - cpu_before) / wall
        clients_share = (clients_cpu_seconds() - clients_before) / wall
        busy, total = machine_busy_ticks()
        self.rates[(workers, clients)].append(rate)
        self.cpu_us[(workers, clients)].append(1e6 * cpu_share / rate)
        self.client_us[(workers, clients)].append(1e6 * clients_share / rate)
        self.busy[(workers, clients)].append(100 * (busy - busy_before) / (total - total_before))

    def median(self, table: dict, workers: int, clients: int) -> float | None:
        values = table.get((workers, clients))
        return statistics.median(values) if values else None


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} %"


def section(args: argparse.Namespace, measured: Measurements) -> str:
    base = args.workers[0]
    cpus = os.cpu_count() or 1
    lines = [
        "| Clients x concurrency | `--grpc_workers` | infer/s | vs "
        f"{base} | server CPU µs/req | clients' CPU µs/req | machine busy | the CPUs' "
        f"ceiling, infer/s | ceiling vs {base} |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for clients in (1, args.clients):
        first = measured.median(measured.rates, base, clients)
        for n in args.workers:
            rate = measured.median(measured.rates, n, clients)
            server = measured.median(measured.cpu_us, n, clients)
            client = measured.median(measured.client_us, n, clients)
            busy = measured.median(measured.busy, n, clients)
            # Every request costs server + clients CPU time; the machine has `cpus` CPUs.
            ceiling = cpus * 1e6 / (server + client) if server and client else None
            cells = [
                f"{clients} x {args.concurrency}",
                str(n),
                fmt_us(rate),
                ratio(rate, first),
                fmt_us(server),
                fmt_us(client),
                percent(busy),
                fmt_us(ceiling),
                ratio(ceiling, first),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    splits = [
        f"{n} workers, {clients} x {args.concurrency}: {', '.join(found)}"
        for (n, clients), found in sorted(measured.splits.items())
    ]
    packages = ("grpcio", "openvino", "ovmsx")
    return "\n".join(
        [
            "## Several serving processes (`--grpc_workers`)",
            "",
            f"Measured {time.strftime('%Y-%m-%d')} on {perf_doc.machine(packages)}.",
            "Rerun with `python bench/bench_workers.py --perf-analyzer PATH --write`.",
            "",
            *lines,
            "",
            f"- `add_one` ([1,10] FP32, `nireq` {bench_models.NIREQ}, `PERFORMANCE_HINT` "
            f"{bench_models.PLUGIN_CONFIG['PERFORMANCE_HINT']}), perf_analyzer "
            "`dynamic_grpc`. *1 x C*: one perf_analyzer, one connection. "
            f"*{args.clients} x C*: {args.clients} perf_analyzers started together, one "
            "connection each, throughputs summed. Each perf_analyzer measures three "
            f"{args.measurement_ms} ms windows; median of {args.rounds} round(s), servers "
            "alternating.",
            "- *server CPU µs/req*: CPU time of the server's processes (supervisor and "
            "workers, all threads, from /proc) during the run, per request answered. *clients' "
            "CPU µs/req*: the same for the perf_analyzers (their rusage). *machine busy*: the "
            "share of all CPUs not idle during the run (/proc/stat), clients included. *the "
            f"CPUs' ceiling*: {cpus} CPUs divided by the CPU time a request costs server and "
            "clients together, the most this machine could answer with every CPU busy. Its "
            "ratio to one worker bounds what more workers can show here: the cheaper the "
            "server's requests, the lower that bound, since the clients' share then dominates.",
            "- Connections held by each worker, one entry per run (from /proc/net/tcp and the "
            "workers' file descriptors; the kernel hashes each connection to a worker): "
            + "; ".join(splits)
            + ".",
            f"- Clients and servers share the machine's {os.cpu_count()} logical CPUs: the "
            "perf_analyzers' own CPU time is part of every figure. 1-minute load average when "
            f"the run started: {args.load_before:.2f}.",
        ]
    )


def main() -> None:
    args = parse_arguments()
    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_workers-")))
        model = bench_models.build_add_one(root)
        config = bench_models.write_config([model], root / "config.json")
        servers: dict[int, Server] = {}
        for workers in args.workers:
            folder = root / f"workers{workers}"  # one log per server
            folder.mkdir()
            command = [*shlex.split(args.ovmsx), "--grpc_workers", str(workers)]
            servers[workers] = stack.enter_context(start_ovmsx(command, config, folder))
            wait_all_serving(servers[workers], workers)
            check_answer(servers[workers], model)
        measured = Measurements(args, model)
        for round_number in range(args.rounds):
            order = args.workers if round_number % 2 == 0 else args.workers[::-1]
            for clients in (1, args.clients):
                for workers in order:
                    measured.run(servers[workers], workers, clients)
    perf_doc.publish(section(args, measured), SECTION, args)


if __name__ == "__main__":
    main()
