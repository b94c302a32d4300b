"""Side-by-side REST benchmark: ovmsx's KServe v2 REST against Triton's, KServe's and MLServer's.

Every server runs at once on its own loopback ports and serves ``add_one`` ([1,10] FP32) and
``identity`` ([1,3,224,224] FP32): ovmsx as OpenVINO models (bench_models), the peers in numpy
(bench/peers/). One load generator (bench/rest_load.py: one client process, keep-alive
connections, raw HTTP/1.1) drives each contender in turn with the same request bytes: JSON
numbers answered as JSON, and the binary-data extension both ways. Contenders alternate round
by round, the order reversed every other round; figures are medians of the rounds. Every
answer is checked once before timing; a server that cannot answer a request form correctly is
shown as ``n/a`` for it, with its reply in the notes.

    python bench/peers/setup_peers.py            # the peers' environments, once
    python bench/bench_peers_rest.py --write     # ~8 min on 2 cores; writes docs/performance.md
    python bench/bench_peers_rest.py --peers triton --concurrency 1 --rounds 1   # prints only

Not part of CI, and imported by no test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import importlib
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import bench_models
import numpy as np
import orjson
import perf_doc
from bench_peers import build_models
from bench_rest import HOST, Contender, running
from bench_serving import free_port, process_cpu_seconds
from peers import memory, setup_peers
from peers.contenders import peer_models
from rest_load import RestCase, infer_case, measure, send_once

SECTION = "bench_peers_rest"
PEERS = ("triton", "kserve", "mlserver")
TITLES = {"ovmsx": "ovmsx", "triton": "Triton", "kserve": "KServe", "mlserver": "MLServer"}
ROWS = ("add_one", "identity")


@contextmanager
def peer_running(name: str, models, root: Path, cache: Path) -> Iterator[tuple[int, int]]:
    """Peer ``name`` (``peers/<name>_peer.py``) serving ``models``: its REST port and pid."""
    peer = importlib.import_module(f"peers.{name}_peer")
    folder = root / name
    folder.mkdir()
    repository = peer.write_repository(models, folder, cache)
    http_port = free_port()
    started = peer.start(repository, free_port(), http_port, free_port(), folder / "log", cache)
    with started as server:
        yield http_port, server.process.pid


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a server and every process it started (Triton's Python stubs)."""
    total = 0.0
    for each in memory.process_tree(pid):
        with contextlib.suppress(FileNotFoundError):  # a process that ended meanwhile
            total += process_cpu_seconds(each)
    return total


def answer_of(status: int, headers: dict[str, str], body: bytes) -> np.ndarray:
    """The first output of a 200 reply, JSON or binary, as FP32."""
    if status != 200:
        raise ValueError(f"HTTP {status}: {body[:200]!r}")
    length = headers.get("inference-header-content-length")
    header = orjson.loads(body if length is None else body[: int(length)])
    output = header["outputs"][0]
    if "data" in output:
        return np.asarray(output["data"], dtype=np.float32)
    return np.frombuffer(body[int(length) :], dtype=np.float32)


def check(port: int, case: RestCase, model: bench_models.BenchModel) -> str | None:
    """None when ``case`` is answered right, in the form it asked for; else what went wrong."""
    reply = asyncio.run(send_once(HOST, port, case.request_bytes(HOST, port)))
    if case.json_length is None:
        sent = np.asarray(orjson.loads(case.body)["inputs"][0]["data"], dtype=np.float32)
    else:
        sent = np.frombuffer(case.body[case.json_length :], dtype=np.float32)
    spec = model.inputs[0]
    expected = bench_models.expected_output(model, {spec.name: sent.reshape(spec.shape)})
    try:
        got = answer_of(*reply)
    except (ValueError, KeyError, IndexError, orjson.JSONDecodeError) as error:
        return f"{case.name}: {error}"
    binary = "inference-header-content-length" in reply.headers
    if binary != (case.json_length is not None):
        return f"{case.name}: answered {'binary' if binary else 'JSON'} data"
    if not np.allclose(got, expected.reshape(-1)):
        return f"{case.name}: wrong answer {got[:5]}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ovmsx", default="ovmsx", help="command that starts ovmsx")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated")
    parser.add_argument("--peers-dir", type=Path, default=setup_peers.DEFAULT_CACHE)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--seconds", type=float, default=2.0, help="measured time per point")
    parser.add_argument("--rounds", type=int, default=3)
    perf_doc.add_write_arguments(parser)
    args = parser.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    missing = [p for p in peers if p not in PEERS or not setup_peers.is_ready(p, args.peers_dir)]
    if missing:
        raise SystemExit(f"no environment for {', '.join(missing)}: run bench/peers/setup_peers.py")
    load_before = os.getloadavg()[0]
    rates: dict[tuple[str, str, int], list[float]] = {}
    cpu: dict[tuple[str, str, int], list[float]] = {}
    refused: dict[tuple[str, str], str] = {}
    names = ["ovmsx", *peers]
    with tempfile.TemporaryDirectory(prefix="bench_peers_rest-") as tmp, ExitStack() as stack:
        root = Path(tmp)
        cache = Path.home() / ".cache" / "ovmsx-bench"
        models = build_models(list(ROWS), root / "models", cache)
        config = bench_models.write_config(list(models.values()), root / "config.json")
        cases = [
            (model, infer_case(model.name, model.inputs[0].name, model.inputs[0].shape, binary))
            for model in models.values()
            for binary in (False, True)
        ]
        servers = {"ovmsx": stack.enter_context(running(_ovmsx(args, config), root))}
        for peer in peers:
            served = peer_models(peer, models)
            servers[peer] = stack.enter_context(peer_running(peer, served, root, args.peers_dir))
        for name in names:
            for model, case in cases:
                problem = check(servers[name][0], case, model)
                if problem is not None:
                    refused[(name, case.name)] = problem
                    print(f"{name}: {problem}", file=sys.stderr)
        for round_number in range(args.rounds):
            order = names if round_number % 2 == 0 else names[::-1]
            for _, case in cases:
                for c in args.concurrency:
                    for name in order:
                        if (name, case.name) in refused:
                            continue
                        port, pid = servers[name]
                        request = case.request_bytes(HOST, port)
                        before = tree_cpu_seconds(pid)
                        rate, sent = asyncio.run(measure(HOST, port, request, c, args.seconds))
                        used = (tree_cpu_seconds(pid) - before) / sent * 1e6
                        rates.setdefault((name, case.name, c), []).append(rate)
                        cpu.setdefault((name, case.name, c), []).append(used)
                        print(f"round {round_number + 1} {name:9} {case.name:16} c={c:<3}"
                              f"{rate:8.0f}/s {used:8.0f} us/req", file=sys.stderr,
                              flush=True)  # fmt: skip
    text = section(args, load_before, names, [c for _, c in cases], rates, cpu, refused)
    perf_doc.publish(text, SECTION, args)


def _ovmsx(args, config: Path) -> Contender:
    """bench_rest's contender for the ``ovmsx`` command (REST and gRPC on loopback ports)."""
    command = (*args.ovmsx.split(), "--config_path", str(config), "--rest_bind_address", HOST)
    return Contender("ovmsx", command)


def section(args, load_before, names, cases, rates, cpu, refused) -> str:
    packages = ["uvicorn", "httptools", "orjson", "openvino"]
    titles = [TITLES[n] for n in names]
    lines = [
        "## REST beside Triton, KServe and MLServer (`bench/bench_peers_rest.py`)",
        "",
        f"{datetime.date.today().isoformat()}; {perf_doc.machine(packages)}. Load average "
        f"before the run: {load_before:.2f}. {args.rounds} rounds of {args.seconds:g} s per "
        "point, contenders alternating; medians of the rounds.",
        "",
        "**Requests per second** (in parentheses: ovmsx's divided by that server's; above 1, "
        "ovmsx serves more)",
        "",
        *_table(names, titles, cases, args.concurrency, rates, ratio=True),
        "",
        "**Server CPU time per request, µs** (the server's whole process tree, from /proc)",
        "",
        *_table(names, titles, cases, args.concurrency, cpu, ratio=False),
        "",
        "Geometric mean of ovmsx's requests/s over each server's, over every point both "
        "measured: " + "; ".join(_geomeans(names, rates)) + ".",
        "",
        "- ovmsx serves OpenVINO models (`nireq` 4, `PERFORMANCE_HINT` LATENCY); the peers "
        "compute `add_one` and `identity` in numpy, as in `bench/bench_peers.py` (Triton 2.51 "
        "Python backend, KServe 0.21 `kserve.Model` answering in the form the request asks "
        "for, MLServer 1.7.1 `MLModel` with `NumpyCodec`, `parallel_workers` 0).",
        "- Client: bench/rest_load.py, one process, `c` keep-alive HTTP/1.1 connections each "
        "sending the same pre-built request. *JSON*: FP32 values with two decimals, answered "
        "as JSON numbers. *binary*: the KServe binary-data extension "
        "(`Inference-Header-Content-Length`, `binary_data_size`, `binary_data_output`).",
        "- Client and servers share the machine's 2 logical CPUs; CPU per request is each "
        "server's own and is the steadier figure.",
    ]
    for (name, _), problem in sorted(refused.items()):
        lines.append(f"- n/a: {TITLES[name]} could not answer {problem}")
    return "\n".join(lines) + "\n"


def _table(names, titles, cases, concurrency, values, ratio: bool) -> list[str]:
    lines = ["| request | c | " + " | ".join(titles) + " |", "|---|---|" + "---|" * len(names)]
    for case in cases:
        for c in concurrency:
            ours = values.get(("ovmsx", case.name, c))
            cells = []
            for name in names:
                found = values.get((name, case.name, c))
                if not found:
                    cells.append("n/a")
                    continue
                cell = f"{statistics.median(found):.0f}"
                if ratio and name != "ovmsx" and ours:
                    cell += f" ({statistics.median(ours) / statistics.median(found):.2f})"
                cells.append(cell)
            lines.append(f"| {case.name} | {c} | " + " | ".join(cells) + " |")
    return lines


def _geomeans(names, rates) -> list[str]:
    found = []
    for name in names[1:]:
        ratios = [
            statistics.median(rates[("ovmsx", *key[1:])]) / statistics.median(values)
            for key, values in rates.items()
            if key[0] == name and ("ovmsx", *key[1:]) in rates
        ]
        if ratios:
            found.append(f"{TITLES[name]} {float(np.exp(np.mean(np.log(ratios)))):.2f}x")
    return found


if __name__ == "__main__":
    main()
