"""What every perf_analyzer benchmark of an ovmsx server shares: its options (and a check that
perf_analyzer runs, before anything else), its rounds on one server, the first lines of its
section, and writing the section (only with ``--write``).

    args = parse_arguments(__doc__, concurrency=[1, 4])
    rates = run_rounds(args, config, root, contenders, check=lambda server: ...)
    perf_doc.publish(header("## Title", args) + table_lines, SECTION, args)

A benchmark whose figures are ratios between servables of one ovmsx server (a graph against
the model it runs, say) needs no particular client: ``parse_arguments(..., rest_load=True)``
lets it be measured with the project's own load generator over KServe REST instead
(``--load-generator rest_load``, bench/rest_load.py), where perf_analyzer is not at hand.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

import perf_doc
from bench_serving import Server, free_port, start_ovmsx
from infer_request_gen import InputSpec, make_inputs
from perf_analyzer_runner import measure_round, require_perf_analyzer
from rest_load import binary_case, measure

Rates = dict[tuple[str, int], list[float]]
PERF_ANALYZER = "perf_analyzer"
REST_LOAD = "rest_load"
HOST = "127.0.0.1"


def parse_arguments(
    doc: str | None,
    concurrency: Sequence[int],
    extra: Callable | None = None,
    rest_load: bool = False,
) -> argparse.Namespace:
    """The shared options; ``rest_load``: the benchmark may run on bench/rest_load.py too."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("--perf-analyzer", default="perf_analyzer", metavar="PATH")
    if rest_load:
        parser.add_argument(
            "--load-generator",
            choices=(PERF_ANALYZER, REST_LOAD),
            default=PERF_ANALYZER,
            help="perf_analyzer over KServe gRPC (default), or the project's own "
            "bench/rest_load.py over KServe REST (binary data), which needs nothing installed",
        )
    parser.add_argument("--ovmsx", default="ovmsx", help="command that starts ovmsx")
    parser.add_argument("--concurrency", type=int, nargs="+", default=list(concurrency))
    parser.add_argument("--measurement-ms", type=int, default=3000)
    parser.add_argument("--stability", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=3)
    perf_doc.add_write_arguments(parser)
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    args.load_generator = getattr(args, "load_generator", PERF_ANALYZER)
    if args.load_generator == PERF_ANALYZER:
        alternative = "--load-generator rest_load" if rest_load else ""
        args.perf_analyzer = require_perf_analyzer(args.perf_analyzer, alternative)
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
    command = shlex.split(args.ovmsx)
    rest_port = free_port()
    if args.load_generator == REST_LOAD:
        command += ["--rest_port", str(rest_port), "--rest_bind_address", HOST]
    server = stack.enter_context(start_ovmsx(command, config, root))
    check(server)
    rates: Rates = {}
    for round_number in range(args.rounds):
        if args.load_generator == REST_LOAD:
            _rest_round(args, rest_port, contenders, round_number, rates)
        else:
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


def _rest_round(
    args: argparse.Namespace,
    port: int,
    contenders: Mapping[str, Sequence[InputSpec]],
    round_number: int,
    rates: Rates,
) -> None:
    """measure_round's counterpart on bench/rest_load.py: the same data, as REST binary data,
    for three of perf_analyzer's windows per point; every answer must be 200."""
    names = list(contenders)
    for name in names if round_number % 2 == 0 else names[::-1]:
        case = binary_case(name, make_inputs(contenders[name]))
        request = case.request_bytes(HOST, port)
        for c in args.concurrency:
            seconds = 3 * args.measurement_ms / 1000
            rate, _ = asyncio.run(measure(HOST, port, request, c, seconds))
            rates.setdefault((name, c), []).append(rate)
            print(f"round {round_number + 1} {name} c={c}: {rate:,.0f}/s", file=sys.stderr)


def load_line(args: argparse.Namespace) -> str:
    """How the figures were measured, for a section's first lines."""
    if args.load_generator == REST_LOAD:
        way = (
            "bench/rest_load.py over KServe REST (binary data both ways), "
            f"{args.rounds} rounds of {3 * args.measurement_ms} ms per point"
        )
    else:
        way = (
            f"perf_analyzer `dynamic_grpc`, {args.rounds} rounds of "
            f"{args.measurement_ms} ms windows"
        )
    return (
        f"{way}, contenders alternating; median infer/s. Load average before the run: "
        f"{args.load_before:.2f}."
    )


def header(title: str, args: argparse.Namespace) -> list[str]:
    return [
        title,
        "",
        f"{datetime.date.today().isoformat()}; {perf_doc.machine(['openvino', 'grpcio'])}.",
        load_line(args),
        "",
    ]
