"""ovmsx's figures over separate starts of the server: a fresh server must give the same
throughput every time, whatever its first calls met (where a Python node runs is decided
from what its calls cost, bench_peers.py's models and graph, perf_analyzer at one concurrency).

    python bench/bench_restarts.py --perf-analyzer PATH --starts 3 [--write]

Each start serves ``add_one`` and ``py_add_one`` as bench_peers.py's ovmsx does, checks both
answers, measures them alternately (``--rounds`` each, median) and stops. The section gives
every start's figures, their spread ((highest - lowest) / lowest) and the placement changes
each start logged. Not part of CI, and imported by no test.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import perf_bench
import perf_doc
from bench_peers import Expectations, build_models, check_answer, placement_changes, start_server
from peers.contenders import row_contenders
from perf_analyzer_runner import run_perf_analyzer

SECTION = "bench_restarts"
ROWS = ("add_one", "py_add_one")


def _options(parser) -> None:
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "ovmsx-bench")
    parser.set_defaults(rounds=3)


def measure_start(args, bench, root: Path, expect: Expectations) -> tuple[dict, list[str]]:
    """One start: {row: its runs' infer/s} and the placement changes it logged."""
    contenders = [row_contenders(row, [], bench)[0] for row in ROWS]
    rates: dict[str, list[float]] = {row: [] for row in ROWS}
    with start_server(args, "ovmsx", bench, root, graph=True) as server:
        for contender in contenders:
            check_answer(server, contender, *expect(contender))
        for round_ in range(args.rounds):
            order = list(zip(ROWS, contenders, strict=True))
            for row, contender in order if round_ % 2 == 0 else order[::-1]:
                (result,) = run_perf_analyzer(
                    args.perf_analyzer, server.url, contender.model, [contender.input],
                    [args.concurrency[0]], args.measurement_ms,
                    stability_percent=args.stability,
                )  # fmt: skip
                rates[row].append(result.throughput_infer_per_s)
                print(f"  {row}: {result.throughput_infer_per_s:,.0f}", file=sys.stderr)
        moves = placement_changes(server.log)
    return rates, moves


def section(args, starts: list[tuple[dict, list[str]]]) -> str:
    c = args.concurrency[0]
    lines = perf_bench.header(
        "## One server, started again and again (`bench/bench_restarts.py`)", args
    )
    lines += [
        f"Each start: `add_one` and `py_add_one` as `bench/bench_peers.py` serves them, "
        f"concurrency {c}, the median of {args.rounds} alternating runs (in parentheses their "
        "lowest and highest), infer/s.",
        "",
        "| start | `add_one` | `py_add_one` | placement changes logged |",
        "|---:|---:|---:|---|",
    ]
    for number, (rates, moves) in enumerate(starts, 1):
        logged = "; ".join(f"`{move}`" for move in moves) or "none"
        cells = " | ".join(_cell(rates[row]) for row in ROWS)
        lines.append(f"| {number} | {cells} | {logged} |")
    between, within = [], []
    for row in ROWS:
        medians = [statistics.median(rates[row]) for rates, _ in starts]
        between.append(f"`{row}` {_spread(medians):.1f} %")
        within.append(f"`{row}` {max(_spread(rates[row]) for rates, _ in starts):.1f} %")
    lines += [
        "",
        "Spread ((highest - lowest) / lowest) of the starts' medians: "
        f"{', '.join(between)}; of one start's runs, at most: {', '.join(within)}.",
    ]
    return "\n".join(lines)


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def _spread(values: list[float]) -> float:
    return 100 * (max(values) - min(values)) / min(values)


def main() -> None:
    args = perf_bench.parse_arguments(__doc__, concurrency=[1], extra=_options)
    with tempfile.TemporaryDirectory(prefix="bench_restarts-") as tmp:
        root = Path(tmp)
        bench = build_models(list(ROWS), root / "models", args.cache_dir)
        expect = Expectations(bench)
        starts = []
        for number in range(args.starts):
            print(f"start {number + 1}", file=sys.stderr)
            starts.append(measure_start(args, bench, root / f"start{number}", expect))
    perf_doc.publish(section(args, starts), SECTION, args)


if __name__ == "__main__":
    main()
