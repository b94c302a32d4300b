"""What metrics cost a request: ``add_one`` over KServe gRPC with metrics off, then on.

Two ovmsx servers, identical but for ``--metrics_enable`` (both get a ``--rest_port``, which
metrics need), measured with Triton's perf_analyzer at concurrency 1 and 4, alternating rounds
so that drift hits both alike. Also ovmsx's own request path without the network (decode,
validate, infer, encode, account), called in this process as gRPC's polling thread calls it,
metrics off and on, timed over many calls.

Run from the repository root (needs ``pip install '.[bench]'`` and a perf_analyzer binary)::

    python bench/bench_metrics.py --perf-analyzer /path/to/perf_analyzer --write

With ``--write``, the run writes docs/metrics.md between the ``bench_metrics:begin``/``end``
markers; without it, the figures are only printed.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import bench_models
import perf_doc
from bench_serving import Server, check_answer, free_port, median_result, running
from perf_analyzer_runner import Result, require_perf_analyzer, run_perf_analyzer

DOC = Path(__file__).resolve().parent.parent / "docs" / "metrics.md"
SECTION = "bench_metrics"
SETTINGS = {"off": [], "on": ["--metrics_enable"]}


def _start(stack: ExitStack, name: str, config: Path, root: Path) -> Server:
    port = free_port()
    command = [
        *(sys.executable, "-m", "ovmsx", "--config_path", str(config)),
        *("--port", str(port), "--grpc_bind_address", "127.0.0.1"),
        *("--rest_port", str(free_port()), "--rest_bind_address", "127.0.0.1"),
        *SETTINGS[name],
    ]
    return stack.enter_context(running(f"metrics {name}", command, port, root / f"{name}.log"))


def inprocess_us(model: bench_models.BenchModel, config: Path, rounds: int = 5) -> dict:
    """Microseconds per request of ovmsx's own request path (decode, validate, infer, encode,
    account), no network: ``KServeService.model_infer_now`` as gRPC's polling thread calls it,
    metrics off and on, alternating rounds; the median round of each."""
    import asyncio

    from infer_request_gen import build_request

    from ovmsx.config import load_config
    from ovmsx.frontend.kserve_service import KServeService
    from ovmsx.frontend.request_observer import RequestObserver
    from ovmsx.metrics.families import DEFAULT_FAMILIES
    from ovmsx.metrics.serving_metrics import ServingMetrics
    from ovmsx.metrics.settings import MetricsSettings
    from ovmsx.servables.inference_dispatch import InferenceDispatcher
    from ovmsx.servables.registry import ServableRegistry

    async def measure() -> dict:
        models = load_config(config).models
        message = build_request(model.name, model.inputs).SerializeToString()
        services = {}
        for name in SETTINGS:
            registry = ServableRegistry(InferenceDispatcher(asyncio.get_running_loop()))
            on = name == "on"
            registry.metrics = ServingMetrics(MetricsSettings(DEFAULT_FAMILIES)) if on else None
            await registry.load(models)
            service = KServeService(registry, RequestObserver(registry, registry.metrics))
            for _ in range(500):  # until add_one is measured quick and answered right here
                answer = service.model_infer_now(message)
                if not isinstance(answer, bytes):
                    await answer(None)
            services[name] = service
        times: dict[str, list[float]] = {name: [] for name in services}
        for _ in range(rounds):
            for name, service in services.items():
                calls = 20_000
                start = time.perf_counter()
                for _ in range(calls):
                    service.model_infer_now(message)
                times[name].append((time.perf_counter() - start) / calls * 1e6)
        return {name: statistics.median(found) for name, found in times.items()}

    return asyncio.run(measure())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--perf-analyzer", default="perf_analyzer", metavar="PATH")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--measurement-ms", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--stability-percent", type=float, default=30.0)
    perf_doc.add_write_arguments(parser, DOC)
    args = parser.parse_args()
    args.perf_analyzer = require_perf_analyzer(args.perf_analyzer)

    rates: dict[tuple[str, int], list[Result]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_metrics-") as tmp, ExitStack() as stack:
        root = Path(tmp)
        model = bench_models.build_add_one(root)
        config = bench_models.write_config([model], root / "config.json")
        servers = {name: _start(stack, name, config, root) for name in SETTINGS}
        for server in servers.values():
            check_answer(server, model)
        for round_number in range(args.rounds):
            order = list(servers) if round_number % 2 == 0 else list(servers)[::-1]
            for name in order:
                for result in run_perf_analyzer(
                    args.perf_analyzer,
                    servers[name].url,
                    model.name,
                    model.inputs,
                    args.concurrency,
                    args.measurement_ms,
                    stability_percent=args.stability_percent,
                ):
                    rates.setdefault((name, result.concurrency), []).append(result)
                    print(f"round {round_number + 1} metrics {name}: {result}", file=sys.stderr)
        inprocess = inprocess_us(model, config)
    text = _section(args, {key: median_result(found) for key, found in rates.items()}, inprocess)
    perf_doc.publish(text, SECTION, args)


def _section(args, cells: dict[tuple[str, int], Result], inprocess: dict[str, float]) -> str:
    lines = [
        "| Concurrency | metrics off infer/s | metrics on infer/s | on / off "
        "| off p50 µs | on p50 µs |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for c in args.concurrency:
        off, on = cells[("off", c)], cells[("on", c)]
        lines.append(
            f"| {c} | {off.throughput_infer_per_s:,.0f} | {on.throughput_infer_per_s:,.0f} "
            f"| {on.throughput_infer_per_s / off.throughput_infer_per_s:.3f} "
            f"| {off.p50_us:,.0f} | {on.p50_us:,.0f} |"
        )
    when = datetime.date.today().isoformat()
    revision = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return "\n".join(
        [
            f"Measured {when} (commit {revision or 'unknown'}) on "
            f"{perf_doc.machine(['openvino', 'grpcio', 'prometheus-client'])}; "
            f"`add_one` [1,10] FP32, perf_analyzer `dynamic_grpc`, median of {args.rounds} "
            f"rounds of {args.measurement_ms} ms windows, servers alternated.",
            "",
            *lines,
            "",
            "ovmsx's own request path alone (decode, validate, infer, encode and, when on, "
            "the accounting: request counter, request-time histogram, inference and wait "
            "histograms), called in one process as gRPC's polling thread calls it: "
            f"{inprocess['off']:.1f} µs per request with metrics off, {inprocess['on']:.1f} µs "
            f"with metrics on (+{inprocess['on'] - inprocess['off']:.1f} µs).",
        ]
    )


if __name__ == "__main__":
    main()
