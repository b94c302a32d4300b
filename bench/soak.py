"""A soak: ovmsx serving good and bad requests for a long time while its config changes.

One ovmsx process serves the repository of soak_repository.py over gRPC and REST. ``concurrency``
client threads send the request kinds of soak_traffic.py in turn (good and bad, unary, streams,
REST), each checking the exact answer; every ``reload_every`` seconds a change is made to the
repository and ``POST /v1/config/reload`` applied (a version added or removed, a model added or
removed, a Python handler edited, config.json broken and restored). Every few seconds the
server's RSS is sampled.

Reported: requests per kind, unexpected answers (with the first few), reloads and their answers,
RSS over time and its growth once settled, and how the server ended (SIGTERM must exit 0, and
its log must hold no traceback or abort). Run from the repository root::

    python bench/soak.py --minutes 10 --write    # writes docs/reliability.md's soak section
    python bench/soak.py --minutes 1             # a quick look, printed only

Exit status 1 if anything unexpected happened, or RSS grew by 5 % or more once settled.

Settled: after ``warm_up`` seconds of traffic alone, then ``WARM_CYCLES`` full cycles of the
changes. Each kind of change allocates for itself the first times it runs (a model compiled and
dropped, a handler module loaded), and the allocator's arenas grow to hold them; growth measured
from before the changes began would count that once-only cost as a leak. A leak grows cycle
after cycle, so it still shows between the first settled minute and the last.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import perf_doc
import soak_repository
import soak_traffic
from bench_serving import free_port

DOC = Path(__file__).resolve().parent.parent / "docs" / "reliability.md"
PLOT = DOC.parent / "soak_rss.svg"
SECTION = "soak"
SAMPLE_EVERY_S = 5.0
WARM_CYCLES = 2
LOG_ALARMS = ("Traceback", "terminate called", "Segmentation fault", "AddressSanitizer", "Fatal")


@dataclass
class Tally:
    """What the client threads saw, shared between them."""

    served: collections.Counter = field(default_factory=collections.Counter)
    unexpected: collections.Counter = field(default_factory=collections.Counter)
    examples: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, failure: str | None) -> None:
        with self.lock:
            if failure is None:
                self.served[kind] += 1
                return
            self.unexpected[kind] += 1
            if len(self.examples) < 10:
                self.examples.append(f"{kind}: {failure}")


def client_loop(index: int, urls: tuple[str, str, int], tally: Tally, stop: threading.Event):
    clients = soak_traffic.Clients(*urls)
    kinds = list(soak_traffic.KINDS.items())
    turn = index  # threads start at different kinds so that every kind runs concurrently
    try:
        while not stop.is_set():
            name, kind = kinds[turn % len(kinds)]
            turn += 1
            try:
                kind(clients)
                tally.record(name, None)
            except Exception as error:  # every failure is counted, whatever its type
                tally.record(name, f"{type(error).__name__}: {str(error)[:300]}")
    finally:
        clients.close()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def start_server(repository: soak_repository.Repository, log: Path, args) -> tuple:
    grpc_port, rest_port = free_port(), free_port()
    command = [
        *(sys.executable, "-m", "ovmsx", "--config_path", str(repository.config_path)),
        *("--port", str(grpc_port), "--rest_port", str(rest_port)),
        *("--grpc_bind_address", "127.0.0.1", "--rest_bind_address", "127.0.0.1"),
        # Reloads come from the config API at known moments, not from the poller.
        *("--file_system_poll_wait_seconds", "0", "--metrics_enable"),
    ]
    sink = log.open("wb")
    process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:]
            raise SystemExit(f"ovmsx exited with {process.returncode}:\n{tail}")
        try:
            clients = soak_traffic.Clients(f"127.0.0.1:{grpc_port}", "127.0.0.1", rest_port)
            soak_traffic.KINDS["gRPC add_one"](clients)
            clients.close()
            return process, (f"127.0.0.1:{grpc_port}", "127.0.0.1", rest_port)
        except Exception:
            time.sleep(0.5)
    process.kill()
    raise SystemExit(f"ovmsx not serving after 120 s; see {log}")


@dataclass
class Run:
    seconds: float
    samples: list[tuple[float, float, int]]  # (seconds since start, RSS MiB, requests so far)
    tally: Tally
    reloads: list[tuple[str, int, int]]  # (change, wanted status, got status)
    exit_code: int
    alarms: list[str]
    settled_s: float  # RSS growth is measured from here

    @property
    def requests(self) -> int:
        return sum(self.tally.served.values()) + sum(self.tally.unexpected.values())

    @property
    def bad_reloads(self) -> list[tuple[str, int, int]]:
        return [r for r in self.reloads if r[1] != r[2]]

    def rss_minute(self, from_s: float) -> float:
        """Median RSS of the minute from ``from_s`` (of the samples, if none are that late)."""
        rss = [(t, r) for t, r, _ in self.samples if t >= from_s] or [
            (t, r) for t, r, _ in self.samples
        ]
        return statistics.median(r for t, r in rss if t < rss[0][0] + 60)

    def rss_growth(self) -> tuple[float, float, float]:
        """Median RSS of the first settled minute, of the last minute, and the growth."""
        start, end = self.rss_minute(self.settled_s), self.rss_minute(self.seconds - 60)
        return start, end, end / start - 1

    def clean(self) -> bool:
        return (
            not self.tally.unexpected
            and not self.bad_reloads
            and self.exit_code == 0
            and not self.alarms
            and self.rss_growth()[2] < 0.05
        )


def soak(args, root: Path) -> Run:
    repository = soak_repository.Repository(root)
    log = root / "ovmsx.log"
    process, urls = start_server(repository, log, args)
    tally, stop = Tally(), threading.Event()
    threads = [
        threading.Thread(target=client_loop, args=(i, urls, tally, stop), daemon=True)
        for i in range(args.concurrency)
    ]
    changes = repository.changes()
    settled_s = args.warm_up  # until WARM_CYCLES cycles of the changes have run
    reloads: list[tuple[str, int, int]] = []
    samples: list[tuple[float, float, int]] = []
    start = time.monotonic()
    next_sample = next_reload = start
    for thread in threads:
        thread.start()
    try:
        while (now := time.monotonic()) < start + args.minutes * 60:
            if process.poll() is not None:
                break
            if now >= next_sample:
                served = sum(tally.served.values()) + sum(tally.unexpected.values())
                samples.append((now - start, rss_mib(process.pid), served))
                next_sample += SAMPLE_EVERY_S
            if now >= next_reload and now > start + args.warm_up:
                change = changes[len(reloads) % len(changes)]
                wanted = change()
                got, body = soak_repository.reload(urls[1], urls[2])
                reloads.append((change.__name__, wanted, got))
                if len(reloads) == WARM_CYCLES * len(changes):
                    settled_s = time.monotonic() - start
                if got != wanted:
                    print(f"reload after {change.__name__}: {got} {body[:300]!r}", flush=True)
                next_reload = time.monotonic() + args.reload_every
            time.sleep(0.2)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        elapsed = time.monotonic() - start
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    text = log.read_text(errors="replace")
    alarms = [line for line in text.splitlines() if any(a in line for a in LOG_ALARMS)]
    return Run(elapsed, samples, tally, reloads, process.returncode, alarms, settled_s)


def plot(args, run: Run, path: Path) -> None:
    import matplotlib

    matplotlib.use("svg")
    from matplotlib import pyplot

    minutes = [t / 60 for t, _, _ in run.samples]
    figure, rss_axis = pyplot.subplots(figsize=(8, 3.5))
    rss_axis.plot(minutes, [rss for _, rss, _ in run.samples], color="tab:blue")
    rss_axis.set_xlabel("minutes")
    rss_axis.set_ylabel("server RSS (MiB)", color="tab:blue")
    rss_axis.set_ylim(bottom=0)
    rate_axis = rss_axis.twinx()
    pairs = zip(run.samples, run.samples[1:], strict=False)
    rates = [(b[2] - a[2]) / (b[0] - a[0]) for a, b in pairs if b[0] > a[0]]
    rate_axis.plot(minutes[1:], rates, color="tab:orange", linewidth=0.8)
    rate_axis.set_ylabel("requests/s", color="tab:orange")
    rate_axis.set_ylim(bottom=0)
    for seconds, what in ((args.warm_up, "changes begin"), (run.settled_s, "settled")):
        rss_axis.axvline(seconds / 60, color="grey", linestyle=":", linewidth=0.8)
        rss_axis.annotate(what, (seconds / 60, 5), rotation=90, fontsize=7, color="grey")
    figure.suptitle("bench/soak.py: server RSS and requests/s")
    figure.tight_layout()
    figure.savefig(path, metadata={"Date": None})
    pyplot.close(figure)


def section(args, run: Run) -> str:
    start, end, growth = run.rss_growth()
    first = run.rss_minute(args.warm_up)
    lines = [
        "## Soak (`bench/soak.py`)",
        "",
        f"{datetime.date.today().isoformat()}, {perf_doc.machine(['openvino', 'grpcio'])}; "
        f"load average {os.getloadavg()[0]:.2f} at the end. {args.minutes:g} minutes, "
        f"{args.concurrency} client threads, a config change every {args.reload_every:g} s "
        f"after {args.warm_up:g} s of traffic alone; settled after {WARM_CYCLES} full cycles "
        f"of the changes ({run.settled_s:.0f} s).",
        "",
        f"- **{run.requests:,} requests** ({run.requests / run.seconds:,.0f}/s), "
        f"**{sum(run.tally.unexpected.values())} unexpected answers**.",
        f"- **{len(run.reloads)} reloads**, {len(run.bad_reloads)} answered otherwise than "
        "expected (the broken config.json must be refused, every other change applied).",
        f"- **RSS**: {start:.0f} MiB in the first settled minute, {end:.0f} MiB in the last "
        f"minute: **{growth * 100:+.1f} %** (peak {max(r for _, r, _ in run.samples):.0f} MiB; "
        f"{first:.0f} MiB in the minute before the first change).",
        f"- **End**: SIGTERM, exit code {run.exit_code}; {len(run.alarms)} traceback, abort or "
        "sanitizer lines in the server's log.",
        "",
        "| request kind | answered as expected | unexpected |",
        "|---|---|---|",
    ]
    for name in soak_traffic.KINDS:
        lines.append(f"| {name} | {run.tally.served[name]:,} | {run.tally.unexpected[name]} |")
    if run.tally.examples:
        lines += ["", "Unexpected answers (first few):", ""]
        lines += [f"- `{example}`" for example in run.tally.examples]
    lines += ["", f"![RSS and requests/s over the soak]({PLOT.name})"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--reload-every", type=float, default=10, help="seconds")
    parser.add_argument(
        "--warm-up", type=float, default=60, help="seconds of traffic before the first change"
    )
    perf_doc.add_write_arguments(parser, DOC)
    parser.add_argument("--samples", type=Path, help="also write the RSS samples here (CSV)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ovmsx-soak-") as tmp:
        run = soak(args, Path(tmp))
    text = section(args, run)
    perf_doc.publish(text, SECTION, args)
    if args.write:
        plot(args, run, args.doc.parent / PLOT.name)
    if args.samples:
        lines = [f"{t:.1f},{rss:.1f},{served}" for t, rss, served in run.samples]
        args.samples.write_text("seconds,rss_mib,requests\n" + "\n".join(lines) + "\n")
    if run.alarms:
        print("log:", *run.alarms[:20], sep="\n  ")
    sys.exit(0 if run.clean() else 1)


if __name__ == "__main__":
    main()
