"""A KServe model's throughput while an LLM beside it generates, against its throughput alone:
what an LLM engine costs the rest of the server.

One ovmsx serves ``add_one`` (FP32 [1,10] + 1, KServe v2 REST) and a small LLM graph. Each
round measures ``add_one`` with bench/rest_load.py (keep-alive connections, one request at a
time each) twice, alternating: with the LLM idle, and with LLM_STREAMS clients streaming long
answers from it without pause. The LLM's clients run in a process of their own, so that
reading its streams takes nothing from the client that times ``add_one``. The ratio of the
medians is the figure; the engine runs in a process of its own, so what remains is the
machine's cores being shared.

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
import urllib.request
from pathlib import Path

from bench_serving import free_port
from perf_doc import add_write_arguments, labelled, machine, publish
from rest_load import infer_case, measure

ROOT = Path(__file__).resolve().parents[1]
SECTION = "llm-beside-kserve"
LLM_STREAMS = 8


def servables(root: Path, llm: Path | None) -> Path:
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
    config = {
        "model_config_list": [
            {"config": {"name": "add_one", "base_path": str(root / "add_one")}},
            {"config": {"name": "llm", "base_path": str(root / "llm")}},
        ]
    }
    path = root / "config.json"
    path.write_text(json.dumps(config))
    return path


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


def kserve_rate(port: int, request: bytes, args, loaded: bool):
    concurrency, seconds = args.concurrency, args.seconds
    context = multiprocessing.get_context("spawn")
    stop, answers = context.Event(), context.Value("i", 0)
    load = context.Process(target=llm_load_process, args=(port, stop, answers, args.llm_tokens))
    if loaded:
        load.start()
        time.sleep(2.0)  # the child is up and the engine busy before counting starts
    rate, _ = asyncio.run(measure("127.0.0.1", port, request, concurrency, seconds))
    if loaded:
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
    with tempfile.TemporaryDirectory(prefix="ovmsx-beside-") as scratch:
        root = Path(scratch)
        config = servables(root, args.llm)
        port = free_port()
        log = (root / "server.log").open("wb")
        command = [sys.executable, "-m", "ovmsx", "--config_path", str(config),
                   "--rest_port", str(port), "--rest_bind_address", "127.0.0.1"]  # fmt: skip
        server = subprocess.Popen(command, cwd=root, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health/ready"):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            request = infer_case("add_one", "INPUT", (1, 10), binary=False).request_bytes(
                "127.0.0.1", port
            )
            alone, loaded = [], []
            for _ in range(args.rounds):
                for busy, into in ((False, alone), (True, loaded)):
                    into.append(kserve_rate(port, request, args, busy))
        finally:
            server.terminate()
            server.wait(30)
            log.close()
    ratio = statistics.median(loaded) / statistics.median(alone)
    text = "\n".join(
        [
            f"`add_one` over KServe v2 REST, {args.concurrency} connections, {args.seconds:g} s "
            f"per measurement, {args.rounds} rounds alternating; the LLM "
            f"({args.llm.name if args.llm else 'tiny, width 64'}) loaded by {LLM_STREAMS} "
            f"clients streaming {args.llm_tokens}-token answers.",
            "",
            "| add_one infer/s | median (min-max) |",
            "|---|---|",
            f"| alone | {statistics.median(alone):,.0f} ({min(alone):,.0f}-{max(alone):,.0f}) |",
            f"| beside a busy LLM | {statistics.median(loaded):,.0f} "
            f"({min(loaded):,.0f}-{max(loaded):,.0f}) |",
            f"| ratio | {ratio:.2f}x |",
            "",
            machine(["openvino", "openvino-genai"]),
        ]
    )
    publish(text, labelled(SECTION, args.label), args)


if __name__ == "__main__":
    main()
