"""A KServe model's throughput while an LLM beside it generates, against its throughput alone:
what an LLM engine costs the rest of the server.

One ovmsx serves ``add_one`` (FP32 [1,10] + 1, KServe v2 REST) and a small LLM graph. Each
round measures ``add_one`` with bench/rest_load.py (keep-alive connections, one request at a
time each) three times, alternating: with the LLM idle; with LLM_STREAMS clients streaming long
answers from it without pause; and, the control, with the same clients streaming from the same
LLM served by a second ovmsx on the same machine. The LLM's clients run in a process of their
own, so that reading its streams takes nothing from the client that times ``add_one``.

Beside the LLM over alone is the figure; the control over alone is what sharing the machine's
cores with that LLM costs any server (an LLM in another process cannot stall this server's
loop), so beside over the control is what serving the LLM in the same server costs beyond it.

    python bench/bench_llm_beside_kserve.py [--rounds 3] [--seconds 5] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_serving import free_port, wait_http_ready
from perf_doc import add_write_arguments, labelled, machine, publish
from rest_load import infer_case, measure

ROOT = Path(__file__).resolve().parents[1]
SECTION = "llm-beside-kserve"
LLM_STREAMS = 8


def servables(root: Path, llm: Path | None) -> tuple[Path, Path]:
    """The config serving ``add_one`` and the LLM, and one serving the LLM alone."""
    import numpy as np
    import openvino as ov
    from openvino import opset13 as ops

    sys.path.insert(0, str(ROOT / "examples" / "llm"))
    from build_llm_folder import write_llm_folder

    x = ops.parameter([1, 10], ov.Type.f32, name="INPUT")
    y = ops.add(x, ops.constant(np.float32(1)))
    model = ov.Model([y], [x], "add_one")
    model.outputs[0].get_tensor().set_names({"OUTPUT"})
    (root / "add_one" / "1").mkdir(parents=True)
    ov.save_model(model, root / "add_one" / "1" / "model.xml")
    graph = (ROOT / "examples" / "llm" / "graph.pbtxt").read_text()
    if llm is None:
        write_llm_folder(root / "llm")
        models_path = "./"
    else:
        (root / "llm").mkdir()
        models_path = str(llm.resolve())
    (root / "llm" / "graph.pbtxt").write_text(
        graph.replace('models_path: "models/tiny"', f'models_path: "{models_path}"')
    )
    add_one = {"config": {"name": "add_one", "base_path": str(root / "add_one")}}
    llm_entry = {"config": {"name": "llm", "base_path": str(root / "llm")}}
    both, alone = root / "config.json", root / "llm_only.json"
    both.write_text(json.dumps({"model_config_list": [add_one, llm_entry]}))
    alone.write_text(json.dumps({"model_config_list": [llm_entry]}))
    return both, alone


def start_server(config: Path, root: Path, name: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    log = (root / f"{name}.log").open("wb")
    command = [sys.executable, "-m", "ovmsx", "--config_path", str(config),
               "--rest_port", str(port), "--rest_bind_address", "127.0.0.1"]  # fmt: skip
    server = subprocess.Popen(command, cwd=root, stdout=log, stderr=log)
    log.close()
    try:
        wait_http_ready(server, f"http://127.0.0.1:{port}/v2/health/ready", name, Path(log.name))
    except RuntimeError:
        server.kill()
        raise
    return server, port


async def llm_load(port: int, stop: asyncio.Event, tokens: int) -> int:
    """LLM_STREAMS clients streaming answers of ``tokens`` tokens back to back; returns the
    answers done."""
    body = json.dumps(
        {"model": "llm", "prompt": "Once upon a time", "max_tokens": tokens, "stream": True}
    ).encode()
    head = (
        f"POST /v3/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    done = 0

    async def client() -> None:
        nonlocal done
        while not stop.is_set():
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(head + body)
            await writer.drain()
            while not (await reader.read(65536)).endswith(b"0\r\n\r\n"):
                pass
            writer.close()
            done += 1

    await asyncio.gather(*(client() for _ in range(LLM_STREAMS)))
    return done


def llm_load_process(port: int, stop, answers, tokens: int) -> None:
    """The LLM's clients, in a child process until ``stop`` is set; ``answers`` gets the count."""

    async def run() -> int:
        done = asyncio.Event()
        watcher = asyncio.get_running_loop().run_in_executor(None, stop.wait)
        watcher.add_done_callback(lambda _: done.set())
        return await llm_load(port, done, tokens)

    answers.value = asyncio.run(run())


def kserve_rate(port: int, request: bytes, args, llm_port: int | None) -> float:
    """``add_one``'s rate on ``port``, with the LLM on ``llm_port`` busy (None: idle)."""
    concurrency, seconds = args.concurrency, args.seconds
    if llm_port is None:
        return asyncio.run(measure("127.0.0.1", port, request, concurrency, seconds))[0]
    context = multiprocessing.get_context("spawn")
    stop, answers = context.Event(), context.Value("i", 0)
    load = context.Process(target=llm_load_process, args=(llm_port, stop, answers, args.llm_tokens))
    load.start()
    time.sleep(2.0)  # the child is up and the engine busy before counting starts
    rate, _ = asyncio.run(measure("127.0.0.1", port, request, concurrency, seconds))
    stop.set()
    load.join(60)
    if not answers.value:
        raise RuntimeError("the LLM load finished no answer: the LLM was not busy")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--llm",
        type=Path,
        help="an LLM folder or .gguf file (default: a tiny model, where the server's work per "
        "streamed token dominates; a compute-bound model shows what the engine's CPU costs)",
    )
    parser.add_argument("--llm-tokens", type=int, default=512, help="tokens per LLM answer")
    parser.add_argument("--label", default="", help="names the docs section")
    add_write_arguments(parser)
    args = parser.parse_args()
    conditions = ("alone", "beside a busy LLM", "beside a busy LLM in another server")
    rates: dict[str, list[float]] = {name: [] for name in conditions}
    with tempfile.TemporaryDirectory(prefix="ovmsx-beside-") as scratch:
        root = Path(scratch)
        both, llm_only = servables(root, args.llm)
        servers = []
        try:
            server, port = start_server(both, root, "server")
            servers.append(server)
            other, other_port = start_server(llm_only, root, "other-server")
            servers.append(other)
            request = infer_case("add_one", "INPUT", (1, 10), binary=False).request_bytes(
                "127.0.0.1", port
            )
            busy = dict(zip(conditions, (None, port, other_port), strict=True))
            for _ in range(args.rounds):
                for name in conditions:
                    rates[name].append(kserve_rate(port, request, args, busy[name]))
        finally:
            for server in servers:
                server.terminate()
                server.wait(30)
    alone, loaded, control = (statistics.median(rates[name]) for name in conditions)
    rows = [
        f"| {name} | {statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f}) |"
        for name, values in rates.items()
    ]
    text = "\n".join(
        [
            f"`add_one` over KServe v2 REST, {args.concurrency} connections, {args.seconds:g} s "
            f"per measurement, {args.rounds} rounds alternating; the LLM "
            f"({args.llm.name if args.llm else 'tiny, width 64'}) loaded by {LLM_STREAMS} "
            f"clients streaming {args.llm_tokens}-token answers, from the server that serves "
            "`add_one` or (the control) from a second ovmsx on the same machine.",
            "",
            "| add_one infer/s | median (min-max) |",
            "|---|---|",
            *rows,
            f"| beside ÷ alone | {loaded / alone:.2f}x |",
            f"| control ÷ alone (the machine's share) | {control / alone:.2f}x |",
            f"| beside ÷ control (the same server's share) | {loaded / control:.2f}x |",
            "",
            machine(["openvino", "openvino-genai"]),
        ]
    )
    publish(text, labelled(SECTION, args.label), args)


if __name__ == "__main__":
    main()
