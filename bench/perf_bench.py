"""What every perf_analyzer benchmark of an ovmsx server shares: its options (and a check that
perf_analyzer runs, before anything else), its rounds on one server, the first lines of its
section, and writing the section (only with ``--write``).

    args = parse_arguments(__doc__, concurrency=[1, 4])
    rates = run_rounds(args, config, root, contenders, check=lambda server: ...)
    perf_doc.publish(header("## Title", args) + table_lines, SECTION, args)
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

import perf_doc
from bench_serving import Server, start_ovmsx
from perf_analyzer_runner import measure_round, require_perf_analyzer

Rates = dict[tuple[str, int], list[float]]


def parse_arguments(
    doc: str | None, concurrency: Sequence[int], extra: Callable | None = None
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("--perf-analyzer", default="perf_analyzer", metavar="PATH")
    parser.add_argument("--ovmsx", default="ovmsx", help="command that starts ovmsx")
    parser.add_argument("--concurrency", type=int, nargs="+", default=list(concurrency))
    parser.add_argument("--measurement-ms", type=int, default=3000)
    parser.add_argument("--stability", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=3)
    perf_doc.add_write_arguments(parser)
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    args.perf_analyzer = require_perf_analyzer(args.perf_analyzer)
    args.load_before = os.getloadavg()[0]
    return args


def run_rounds(
    args: argparse.Namespace,
    stack: ExitStack,
    config: Path,
    root: Path,
    contenders: Mapping[str, Sequence],
    check: Callable[[Server], None],
    between_rounds: Callable[[Server], None] | None = None,
) -> Rates:
    """Serve ``config``, check every contender's answer (perf_analyzer ignores reply status),
    then measure them all, alternating, ``args.rounds`` times."""
    server = stack.enter_context(start_ovmsx(shlex.split(args.ovmsx), config, root))
    check(server)
    rates: Rates = {}
    for round_number in range(args.rounds):
        measure_round(
            args.perf_analyzer,
            server.url,
            contenders,
            round_number,
            args.concurrency,
            args.measurement_ms,
            args.stability,
            rates,
        )
        if between_rounds is not None:
            between_rounds(server)
    return rates


def header(title: str, args: argparse.Namespace) -> list[str]:
    return [
        title,
        "",
        f"{datetime.date.today().isoformat()}; {perf_doc.machine(['openvino', 'grpcio'])}.",
        f"perf_analyzer `dynamic_grpc`, {args.rounds} rounds of {args.measurement_ms} ms "
        "windows, contenders alternating; median infer/s. Load average before the run: "
        f"{args.load_before:.2f}.",
        "",
    ]
