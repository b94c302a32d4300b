"""Side-by-side benchmark: ovmsx against Triton, KServe and MLServer serving the same models.

Every server runs at once on its own loopback ports and serves the same four things:
``add_one`` ([1,10] FP32), ``identity`` ([1,3,224,224] FP32), ``ocr_det`` (the PaddleOCR v4
text detector of bench_serving.py, 1x3x640x640) and ``py_add_one`` (Python code adding 1: a
one-node Python graph in ovmsx, Triton's Python backend in numpy). ovmsx serves OpenVINO models
as bench_serving.py builds them; the peers compute add_one and identity in numpy and run the CNN
with OpenVINO under the same properties (bench/peers/). One perf_analyzer (dynamic_grpc) drives
each contender in turn, at each concurrency, for ``--rounds`` rounds, the order reversed every
other round. Each server's memory is read from /proc: idle with ``add_one`` alone, idle with
every model, and at its peak during the top-concurrency runs.

The peers' environments come first, once (outside the repository)::

    python bench/peers/setup_peers.py
    python bench/bench_peers.py --perf-analyzer PATH --write
    python bench/bench_peers.py --perf-analyzer PATH --peers triton --models add_one \
        --concurrency 1 --rounds 1 --measurement-ms 1000  # a quick look, printed only

Not part of CI, and imported by no test.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path

import bench_models
import numpy as np
import perf_bench
import perf_doc
from bench_serving import Server, free_port
from infer_request_gen import make_inputs
from peers import memory, ovmsx_contender, report, setup_peers
from peers.contenders import ROWS, Contender, contender_for, groups, peer_models, row_contenders
from peers.models import PeerModel, numpy_model
from perf_analyzer_runner import PerfAnalyzerError, Result, run_perf_analyzer
from tritonclient import grpc as triton

SECTION = "bench_peers"
PEERS = ("triton", "kserve", "mlserver")
MODEL_READY_TIMEOUT_S = 300  # some servers report ready before their models have loaded
SETTLE_S = 2.0  # before reading idle memory: let start-up garbage and threads settle


def _names(text: str, known: Sequence[str], what: str) -> list[str]:
    names = [n for n in text.split(",") if n]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise SystemExit(f"unknown {what} {', '.join(unknown)}; choose from {', '.join(known)}")
    return names


def _options(parser) -> None:
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated")
    parser.add_argument("--models", default=",".join(ROWS), help="comma-separated")
    parser.add_argument("--peers-dir", type=Path, default=setup_peers.DEFAULT_CACHE)
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "ovmsx-bench")
    parser.set_defaults(rounds=2)


def build_models(
    rows: Sequence[str], root: Path, cache: Path
) -> dict[str, bench_models.BenchModel]:
    """bench_serving's models; add_one always (py_add_one's Triton contender, memory baseline)."""
    root.mkdir()
    built = [bench_models.build_add_one(root)]
    if "identity" in rows:
        built.append(bench_models.build_identity(root))
    if "ocr_det" in rows:
        built.append(bench_models.build_ocr_det(root, cache))
    return {m.name: m for m in built}


def start_server(
    args, name: str, bench: dict[str, bench_models.BenchModel], root: Path, graph: bool
) -> AbstractContextManager[Server]:
    """Server ``name`` serving every model of ``bench``, and the graph if ``graph``."""
    root.mkdir(parents=True)
    if name == "ovmsx":
        config = ovmsx_contender.write_config(list(bench.values()), root, graph)
        return ovmsx_contender.start(args.ovmsx, config, root)
    return start_peer(args, name, peer_models(name, bench), root)


def start_peer(args, name: str, served: list[PeerModel], root: Path):
    """Peer ``name`` (its module ``peers/<name>_peer.py``) serving ``served``."""
    peer = importlib.import_module(f"peers.{name}_peer")
    repository = peer.write_repository(served, root, args.peers_dir)
    ports = (free_port(), free_port(), free_port())
    return peer.start(repository, *ports, root / f"{name}.log", args.peers_dir)


def served_count(name: str, bench: dict[str, bench_models.BenchModel], graph: bool) -> int:
    return len(bench) + graph if name == "ovmsx" else len(peer_models(name, bench))


def check_answer(server: Server, contender: Contender, x: np.ndarray, expected: np.ndarray) -> None:
    """One request with tritonclient: perf_analyzer's dynamic_grpc ignores reply status."""
    client = triton.InferenceServerClient(server.url)
    try:
        deadline = time.monotonic() + MODEL_READY_TIMEOUT_S
        while not client.is_model_ready(contender.model):
            if time.monotonic() > deadline:
                raise SystemExit(f"{server.name}: {contender.model} not ready; see {server.log}")
            time.sleep(0.2)
        tensor = triton.InferInput(contender.input.name, list(x.shape), contender.input.datatype)
        tensor.set_data_from_numpy(x)
        wanted = [triton.InferRequestedOutput(contender.output)]
        got = client.infer(contender.model, [tensor], outputs=wanted).as_numpy(contender.output)
    finally:
        client.close()
    # The CNN's kernels may sum in another order than the local reference run; the check is
    # that the right model ran on the right data.
    if got is None or got.shape != expected.shape or not np.allclose(got, expected, atol=2e-2):
        raise SystemExit(f"{server.name} answered {contender.model} wrongly: {got!r}")


class Expectations:
    """The answer each contender must give for the benchmark's request (same seed as
    infer_request_gen.py, so perf_analyzer sends the very data checked here)."""

    def __init__(self, bench: dict[str, bench_models.BenchModel]) -> None:
        self.bench = bench
        self._cnn: np.ndarray | None = None

    def __call__(self, contender: Contender) -> tuple[np.ndarray, np.ndarray]:
        x = make_inputs([contender.input])[contender.input.name]
        if contender.expects == "add_one":
            return x, x + np.float32(1)
        if contender.expects == "identity":
            return x, x
        if self._cnn is None:
            model = self.bench["ocr_det"]
            self._cnn = bench_models.expected_output(model, make_inputs(model.inputs))
        return x, self._cnn


def idle_memory(server: Server) -> tuple[int, int, int]:
    """(processes, RSS, PSS) of the server's whole process tree."""
    pids = memory.process_tree(server.process.pid)
    return len(pids), memory.rss_bytes(pids), memory.pss_bytes(pids)


def start_alone(args, name: str, add_one: bench_models.BenchModel, root: Path):
    """Server ``name`` serving ``add_one`` alone (numpy on the peers): the memory baseline."""
    if name == "ovmsx":
        return start_server(args, name, {"add_one": add_one}, root, graph=False)
    root.mkdir(parents=True)
    return start_peer(args, name, [numpy_model(add_one)], root)


def measure_baselines(args, names, bench, root: Path, expect: Expectations) -> dict:
    """Each server alone with add_one (its smallest start), one after the other."""
    found = {}
    contender = contender_for("", "", bench["add_one"])
    for name in names:
        with start_alone(args, name, bench["add_one"], root / name) as server:
            check_answer(server, contender, *expect(contender))
            time.sleep(SETTLE_S)
            found[name] = idle_memory(server)[1:]
        print(f"baseline {name}: RSS {found[name][0] / report.MIB:.0f} MiB", file=sys.stderr)
    return found


class Measurements:
    """Every perf_analyzer run, by (server, served model, concurrency), and peak memory."""

    def __init__(self, args, servers: dict[str, Server], plan: dict[str, list[Contender]]) -> None:
        self.args, self.servers, self.plan = args, servers, plan
        self.runs: dict[tuple[str, str, int], list[Result]] = defaultdict(list)
        self.peaks: dict[str, dict[str, int]] = defaultdict(dict)
        self.top = max(args.concurrency)
        self.lost: list[tuple[str, str, int]] = []

    def run(self, group: str, contender: Contender, c: int) -> None:
        server = self.servers[contender.server]
        print(f"  {group} c={c} {contender.column} ({contender.model})", file=sys.stderr)
        if c != self.top:
            self._time(server, contender, c)
            return
        with memory.PeakRss(server.process.pid) as peak:
            self._time(server, contender, c)
        peaks = self.peaks[contender.server]
        peaks[group] = max(peaks.get(group, 0), peak.peak)

    def _time(self, server: Server, contender: Contender, c: int) -> None:
        try:
            (result,) = run_perf_analyzer(
                self.args.perf_analyzer,
                server.url,
                contender.model,
                [contender.input],
                [c],
                self.args.measurement_ms,
                stability_percent=self.args.stability,
            )
        except PerfAnalyzerError as error:
            # Mostly: no three windows agreed on a busy machine. One lost run should not cost
            # the whole benchmark; the section lists the lost runs.
            print(f"    lost: {str(error).splitlines()[-1]}", file=sys.stderr)
            self.lost.append((contender.column, contender.model, c))
            return
        self.runs[(contender.server, contender.model, c)].append(result)

    def all(self) -> None:
        for group, members in self.plan.items():
            for c in self.args.concurrency:
                for round_ in range(self.args.rounds):
                    for contender in members if round_ % 2 == 0 else members[::-1]:
                        self.run(group, contender, c)


def versions(peers: Sequence[str], cache: Path) -> str:
    wanted = {
        "triton": ("nvidia-pytriton", "numpy", "openvino"),
        "kserve": ("kserve", "grpcio", "numpy", "openvino"),
        "mlserver": ("mlserver", "grpcio", "numpy", "openvino"),
    }
    parts = []
    for peer in peers:
        found = ", ".join(
            f"{p} {setup_peers.installed_version(peer, p, cache)}" for p in wanted[peer]
        )
        parts.append(f"{report.SERVER_TITLES[peer]} venv: {found}")
    return "; ".join(parts)


def section(args, rows, peers, bench, measurements: Measurements, mem, placements) -> str:
    table_rows = {row: row_contenders(row, peers, bench) for row in rows}
    top = measurements.top
    throughput = report.throughput_table(table_rows, args.concurrency, measurements.runs)
    lines = perf_bench.header(
        "## ovmsx beside Triton, KServe and MLServer (`bench/bench_peers.py`)", args
    )
    lines += [
        f"ovmsx {importlib.metadata.version('ovmsx')}; {versions(peers, args.peers_dir)}. "
        "Rerun with `python bench/peers/setup_peers.py && "
        "python bench/bench_peers.py --perf-analyzer PATH --write`.",
        "",
        "**Throughput, infer/s**: the median of the rounds (in parentheses their lowest and "
        "highest), then ovmsx's median divided by that server's (above 1, ovmsx serves more)",
        "",
        *throughput,
        "",
        *_moved_since_last_run(args, throughput),
        "**Latency, p50 ms**",
        "",
        *report.latency_table(table_rows, args.concurrency, measurements.runs),
        "",
        "**Memory, MiB**",
        "",
        *report.memory_table(mem, list(measurements.plan), top),
        "",
        *NOTES,
        f"- Memory: read from /proc over each server's whole process tree. *`add_one` alone*: "
        "the server started with that one model, idle after one request. *All models*: the "
        "measured server, idle after one request per model. *Per further model*: (all - alone) "
        f"/ (models - 1). *Peak*: highest RSS sampled every 50 ms during the c={top} runs of "
        "that row's models on that server, over all rounds (memory the allocator kept from "
        f"earlier runs counts). *Per in-flight request*: (highest peak - all-models idle) / {top}, "
        "an upper bound. RSS counts pages shared between a server's processes (Triton's stubs) "
        "once per process; PSS divides them among the processes.",
    ]
    lines.append(
        "- Placement in ovmsx (its INFO log): "
        + ("; ".join(f"`{line}`" for line in placements) if placements else "no change")
        + "."
    )
    if measurements.lost:
        lost = ", ".join(f"{column} `{model}` c={c}" for column, model, c in measurements.lost)
        lines.append(f"- Runs that found no stable windows and count in no median: {lost}.")
    return "\n".join(lines) + "\n"


def _moved_since_last_run(args, throughput: list[str]) -> list[str]:
    """Lines naming the figures that moved since the section in ``args.doc`` by more than the
    spread of the rounds: such a figure did not reproduce, and the text around it may be stale."""
    begin, end = perf_doc.markers(SECTION)
    doc = args.doc.read_text() if args.doc.exists() else ""
    if begin not in doc or end not in doc:
        return []
    previous = doc[doc.index(begin) : doc.index(end)].splitlines()
    changes = report.moved(previous, throughput)
    if not changes:
        return ["Every figure is within the spread of the rounds of the run before.", ""]
    return [
        "**Moved since the run before by more than the spread of the rounds:**",
        "",
        *(f"- {change}" for change in changes),
        "",
    ]


NOTES = (
    "- ovmsx serves OpenVINO models as `bench/bench_serving.py` builds them (`nireq` 4, "
    "`PERFORMANCE_HINT` LATENCY) and `py_add_one` as `bench/bench_graphs.py` does: a graph of "
    "one Python node adding 1 with numpy. *Triton*: Triton 2.51 (the `tritonserver` of "
    "`nvidia-pytriton`), Python backend, one instance per model, numpy in `model.py`; its "
    "`py_add_one` figure is its `add_one` run. *Triton + OpenVINO*: the same backend with "
    "`model.py` compiling the model file with OpenVINO (the wheel has no OpenVINO backend). "
    "*KServe*: 0.21 `ModelServer`, one `kserve.Model` per model with a plain `predict`, its "
    "per-call gRPC log line filtered out and latency logging off. *MLServer*: 1.7.1, one custom "
    "`MLModel` per model with `NumpyCodec`, `parallel_workers` 0, `debug` off. KServe and "
    "MLServer compute `add_one`/`identity` in numpy and the CNN with OpenVINO.",
    "- The CNN: every server compiles the same ONNX file with the same OpenVINO release on "
    "CPU, reshaped to 1x3x640x640, `PERFORMANCE_HINT` LATENCY (one stream); the peers run it "
    "on one infer request, called by one thread at a time.",
    "- Client: perf_analyzer `--service-kind=dynamic_grpc`, one pre-serialized request with "
    "raw FP32 inputs (bench/infer_request_gen.py), windows repeated until three agree within "
    "the stability percentage; median of the rounds. Every server runs during the whole "
    "measurement on the same CPUs as perf_analyzer, idle but for the contender being timed. "
    "Each contender's answer was checked with tritonclient before timing.",
)


def main() -> None:
    args = perf_bench.parse_arguments(__doc__, concurrency=[1, 4, 16], extra=_options)
    peers = _names(args.peers, PEERS, "peer(s)")
    rows = _names(args.models, ROWS, "model(s)")
    missing = [p for p in peers if not setup_peers.is_ready(p, args.peers_dir)]
    if missing:
        raise SystemExit(f"no environment for {', '.join(missing)}: run bench/peers/setup_peers.py")
    names = ["ovmsx", *peers]
    graph = "py_add_one" in rows
    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_peers-")))
        bench = build_models(rows, root / "models", args.cache_dir)
        expect = Expectations(bench)
        base = measure_baselines(args, names, bench, root / "base", expect)
        servers = {
            n: stack.enter_context(start_server(args, n, bench, root / n, graph)) for n in names
        }
        plan = groups(rows, peers, bench)
        for members in plan.values():
            for contender in members:
                check_answer(servers[contender.server], contender, *expect(contender))
        time.sleep(SETTLE_S)
        mem = {}
        for name, server in servers.items():
            processes, rss, pss = idle_memory(server)
            mem[name] = report.Memory(
                processes, served_count(name, bench, graph), *base[name], rss, pss
            )
        print(f"answers checked; measuring ({args.measurement_ms} ms windows)", file=sys.stderr)
        measurements = Measurements(args, servers, plan)
        measurements.all()
        for name, peaks in measurements.peaks.items():
            mem[name].peak_rss = peaks
        placements = placement_changes(servers["ovmsx"].log)
    text = section(args, rows, peers, bench, measurements, mem, placements)
    perf_doc.publish(text, SECTION, args)


def placement_changes(log: Path) -> list[str]:
    """ovmsx's log lines that moved a callee between the serving threads and the workers."""
    marks = (" runs inline now: ", " moves to a worker: ")
    lines = log.read_text(errors="replace").splitlines()
    return [line.split("] ", 1)[-1] for line in lines if any(mark in line for mark in marks)]


if __name__ == "__main__":
    main()
