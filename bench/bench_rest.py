"""REST benchmark: which HTTP and JSON libraries carry ovmsx's KServe v2 REST API fastest.

Every candidate (bench/rest_candidates.py) serves the same models through the same
``ovmsx.frontend.rest_app.RestApp`` on one asyncio loop, as ovmsx does; they differ only in the
HTTP library, and two variants swap orjson for the standard ``json`` module in the REST codec:

* ``uvicorn-asgi``: uvicorn with its httptools parser, a raw ASGI function;
* ``uvicorn-starlette``: the same, with Starlette's request and response objects;
* ``aiohttp-lowlevel``: aiohttp's low-level ``web_server.Server``;
* ``aiohttp-web``: aiohttp's ``web.Application`` with one catch-all route;
* ``... + json``: a candidate with the standard library's JSON instead of orjson;
* ``ovmsx``: the ``ovmsx`` command itself (``--rest_port``), whatever library it uses.

Requests: ``add_one`` ([1,10] FP32) and ``identity`` ([1,3,224,224] FP32, 602 KB), each as JSON
numbers (answered as JSON) and as binary data both ways. One client process
(bench/rest_load.py) keeps ``c`` keep-alive connections busy; contenders alternate round by
round; figures are medians of the rounds: requests per second, and the server's CPU time per
request (all its threads, from /proc), which depends far less on what else the machine runs.
Every answer is checked once before timing.

    python bench/bench_rest.py --write         # ~6 min on 2 cores; writes docs/performance.md
    python bench/bench_rest.py --seconds 1 --rounds 1   # a quick look, printed only
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import bench_models
import numpy as np
import orjson
import perf_doc
from bench_serving import free_port, process_cpu_seconds
from rest_load import RestCase, infer_case, measure, send_once

SECTION = "bench_rest"
HOST = "127.0.0.1"
CANDIDATE_SERVER = Path(__file__).resolve().parent / "rest_candidates.py"
LIBRARIES = ("uvicorn-asgi", "uvicorn-starlette", "aiohttp-lowlevel", "aiohttp-web")
STDLIB_JSON = ("uvicorn-asgi", "aiohttp-lowlevel")  # also measured with the stdlib json
READY_TIMEOUT_S = 120


@dataclass(frozen=True)
class Contender:
    name: str
    command: tuple[str, ...]
    json_only: bool = False  # the stdlib-json variants run the JSON cases only


def contenders(config: Path, ovmsx: str) -> list[Contender]:
    found = []
    for library in LIBRARIES:
        base = (sys.executable, str(CANDIDATE_SERVER), "--candidate", library)
        found.append(Contender(library, (*base, "--config", str(config))))
        if library in STDLIB_JSON:
            command = (*base, "--config", str(config), "--json", "stdlib")
            found.append(Contender(f"{library} + json", command, json_only=True))
    command = (*ovmsx.split(), "--config_path", str(config), "--rest_bind_address", HOST)
    found.append(Contender("ovmsx", command))
    return found


@contextmanager
def running(contender: Contender, root: Path) -> Iterator[tuple[int, int]]:
    """Start a contender on a free port; its port and process id while it runs."""
    port = free_port()
    if contender.name == "ovmsx":
        command = [*contender.command, "--rest_port", str(port), "--port", str(free_port())]
        command += ["--grpc_bind_address", HOST]
    else:
        command = [*contender.command, "--port", str(port)]
    log = root / f"{contender.name.replace(' ', '_')}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        _wait_ready(process, port, log)
        yield port, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_ready(process: subprocess.Popen, port: int, log: Path) -> None:
    ready = f"GET /v2/health/ready HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{log.name}: exited with {process.returncode}:\n{log.read_text()}")
        try:
            if asyncio.run(send_once(HOST, port, ready)).status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"not ready after {READY_TIMEOUT_S} s; see {log}")


def check(port: int, case: RestCase, model: bench_models.BenchModel) -> None:
    """Send ``case`` once and compare the answer with what the model must give."""
    status, headers, body = asyncio.run(send_once(HOST, port, case.request_bytes(HOST, port)))
    if status != 200:
        raise SystemExit(f"{case.name}: HTTP {status}: {body[:300]!r}")
    if case.json_length is None:
        sent = np.asarray(orjson.loads(case.body)["inputs"][0]["data"], dtype=np.float32)
        got = np.asarray(orjson.loads(body)["outputs"][0]["data"], dtype=np.float32)
    else:
        sent = np.frombuffer(case.body[case.json_length :], dtype=np.float32)
        header = int(headers["inference-header-content-length"])
        orjson.loads(body[:header])
        got = np.frombuffer(body[header:], dtype=np.float32)
    spec = model.inputs[0]
    expected = bench_models.expected_output(model, {spec.name: sent.reshape(spec.shape)})
    if not np.allclose(got, expected.reshape(-1)):
        raise SystemExit(f"{case.name}: wrong answer {got[:5]} (expected {expected.ravel()[:5]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ovmsx", default="ovmsx", help="command that starts ovmsx")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--seconds", type=float, default=2.0, help="measured time per point")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="+", help="contender names to run")
    perf_doc.add_write_arguments(parser)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rates: dict[tuple[str, str, int], list[float]] = {}
    cpu: dict[tuple[str, str, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_rest-") as tmp, ExitStack() as stack:
        root = Path(tmp)
        built = (bench_models.build_add_one(root), bench_models.build_identity(root))
        models = {model.name: model for model in built}
        config = bench_models.write_config(list(models.values()), root / "config.json")
        cases = [
            (model, infer_case(model.name, spec.name, spec.shape, binary))
            for model in models.values()
            for spec in model.inputs
            for binary in (False, True)
        ]
        chosen = [c for c in contenders(config, args.ovmsx) if not args.only or c.name in args.only]
        servers = {c.name: stack.enter_context(running(c, root)) for c in chosen}
        for contender in chosen:
            for model, case in cases:
                if not (contender.json_only and case.json_length is not None):
                    check(servers[contender.name][0], case, model)
        for round_number in range(args.rounds):
            order = chosen if round_number % 2 == 0 else chosen[::-1]
            for contender in order:
                port, pid = servers[contender.name]
                for _, case in cases:
                    if contender.json_only and case.json_length is not None:
                        continue
                    request = case.request_bytes(HOST, port)
                    for c in args.concurrency:
                        before = process_cpu_seconds(pid)
                        rate, sent = asyncio.run(measure(HOST, port, request, c, args.seconds))
                        used = (process_cpu_seconds(pid) - before) / sent * 1e6
                        key = (contender.name, case.name, c)
                        rates.setdefault(key, []).append(rate)
                        cpu.setdefault(key, []).append(used)
                        print(f"round {round_number + 1} {contender.name:24} {case.name:16} "
                              f"c={c}: {rate:8.0f}/s {used:8.0f} us/req", file=sys.stderr,
                              flush=True)  # fmt: skip
    names = [c.name for c in chosen]
    text = section(args, load_before, names, [c for _, c in cases], rates, cpu)
    perf_doc.publish(text, SECTION, args)


def section(args, load_before: float, names, cases: list[RestCase], rates, cpu) -> str:
    packages = ["uvicorn", "httptools", "starlette", "aiohttp", "orjson", "openvino"]
    lines = [
        "## REST (`bench/bench_rest.py`)",
        "",
        f"{datetime.date.today().isoformat()}; {perf_doc.machine(packages)}.",
        f"One client process (bench/rest_load.py), keep-alive connections, {args.rounds} rounds "
        f"of {args.seconds:g} s per point, contenders alternating; medians of the rounds. Load "
        f"average before the run: {load_before:.2f}.",
        "",
        "Requests per second:",
        "",
        *_table(names, cases, args.concurrency, rates, "{:.0f}"),
        "",
        "Server CPU time per request (µs; all the server's threads, from /proc):",
        "",
        *_table(names, cases, args.concurrency, cpu, "{:.0f}"),
        "",
        "Geometric mean over every request and concurrency, relative to the first column "
        "(requests/s; CPU per request): " + "; ".join(_relative(names, rates, cpu)) + ".",
        "",
        "- Every candidate runs ovmsx's REST code (routing, codec, inference) on one asyncio "
        "loop; only the HTTP library, or the JSON library (`+ json`: the standard `json` module "
        "instead of orjson, on JSON requests only), differs. `ovmsx` is the `ovmsx` command "
        "serving `--rest_port` (gRPC on too).",
        "- JSON requests send `[1,10]` or `[1,3,224,224]` FP32 values with two decimals and get "
        "JSON numbers back; binary requests send and receive raw FP32 (KServe binary extension).",
        "- Client and servers share the machine's 2 logical CPUs: the client's CPU time is part "
        "of every requests/s figure, equally for all contenders; CPU per request is the server's "
        "own and is the steadier figure when the machine is shared.",
    ]
    return "\n".join(lines)


def _table(names, cases: list[RestCase], concurrency, values, form: str) -> list[str]:
    lines = ["| request | c | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for case in cases:
        for c in concurrency:
            cells = []
            for name in names:
                found = values.get((name, case.name, c))
                cells.append(form.format(statistics.median(found)) if found else "-")
            lines.append(f"| {case.name} | {c} | " + " | ".join(cells) + " |")
    return lines


def _relative(names, rates, cpu) -> list[str]:
    """Each contender against the first, over the points both measured."""
    base, found = names[0], []
    for name in names[1:]:
        keys = [k for k in rates if k[0] == name and (base, *k[1:]) in rates]
        if not keys:
            continue
        speed = _geomean([_median(rates, k) / _median(rates, (base, *k[1:])) for k in keys])
        cost = _geomean([_median(cpu, k) / _median(cpu, (base, *k[1:])) for k in keys])
        found.append(f"{name} {speed:.2f}x; {cost:.2f}x")
    return found


def _median(values, key) -> float:
    return statistics.median(values[key])


def _geomean(ratios: list[float]) -> float:
    return float(np.exp(np.mean(np.log(ratios))))


if __name__ == "__main__":
    main()
