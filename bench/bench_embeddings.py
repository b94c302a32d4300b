"""ovmsx's /v3/embeddings and /v3/rerank against openvino-genai's TextEmbeddingPipeline and
TextRerankPipeline driven in-process on the same folder, side by side.

For each input length (short, long) and concurrency, each round runs both contenders one after
the other:

- ``in-process``: bench/encoders_inprocess.py, client threads sharing one pipeline;
- ``ovmsx``: ``ovmsx --task embeddings`` (or ``rerank``) on the same folder, loaded by
  bench/rest_load.py (keep-alive connections, one request at a time each) from this process.

One request is one text to embed, or one query with ``--documents`` documents to rerank.
Reported: requests/s (and documents/s for rerank) as the median of the rounds with their
spread, and ovmsx over in-process.

    python bench/bench_embeddings.py --task embeddings [--rounds 3] [--write]
    python bench/bench_embeddings.py --task rerank --documents 8

The folders are built by examples/rag/build_encoder_folders.py (random weights, BERT-like,
``--hidden``/``--layers``: 384 and 6 by default, the size of small sentence-embedding models).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench_serving import free_port
from perf_doc import add_write_arguments, machine, publish
from rest_load import RestCase, measure

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "retrieval augmented generation finds documents and answers questions from them "


def text_of(words: int) -> str:
    return " ".join((SENTENCE * (words // 8 + 1)).split()[:words])


def in_process(args, folder: Path, text: str, concurrency: int) -> float:
    command = [
        sys.executable, str(ROOT / "bench" / "encoders_inprocess.py"), args.task, str(folder),
        "--concurrency", str(concurrency), "--seconds", str(args.seconds), "--text", text,
        "--documents", str(args.documents),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["requests_per_s"]


class Server:
    def __init__(self, task: str, folder: Path, workdir: Path) -> None:
        self.port = free_port()
        self.log = (workdir / "server.log").open("wb")
        command = [
            sys.executable, "-m", "ovmsx", "--model_name", "m", "--model_path", str(folder),
            "--task", task, "--rest_port", str(self.port), "--rest_bind_address", "127.0.0.1",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, cwd=workdir, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v2/health/ready"):
                    return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"ovmsx did not start: see {self.log.name}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


def served(args, server: Server, text: str, concurrency: int) -> float:
    if args.task == "embeddings":
        body = {"model": "m", "input": text}
        path = "/v3/embeddings"
    else:
        body = {"model": "m", "query": text, "documents": [text] * args.documents}
        path = "/v3/rerank"
    request = RestCase(args.task, path, json.dumps(body).encode()).request_bytes(
        "127.0.0.1", server.port
    )
    rate, _ = asyncio.run(measure("127.0.0.1", server.port, request, concurrency, args.seconds))
    return rate


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--task", choices=("embeddings", "rerank"), default="embeddings")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--short", type=int, default=16, help="words in a short input")
    parser.add_argument("--long", type=int, default=200, help="words in a long input")
    parser.add_argument("--documents", type=int, default=8, help="rerank: documents per query")
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--vocab", type=int, default=30000)
    add_write_arguments(parser)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "examples" / "rag"))
    from build_encoder_folders import write_encoder_folders

    lengths = {"short": text_of(args.short), "long": text_of(args.long)}
    results: dict[tuple[str, str, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="ovmsx-bench-encoders-") as scratch:
        workdir = Path(scratch)
        folders = write_encoder_folders(
            workdir / "models", args.hidden, args.layers, args.heads, args.vocab
        )
        folder = folders["embed" if args.task == "embeddings" else "rerank"]
        server = Server(args.task, folder, workdir)
        try:
            for _ in range(args.rounds):
                for length, text in lengths.items():
                    for concurrency in args.concurrency:
                        key = (length, str(concurrency))
                        results.setdefault(("in-process", *key), []).append(
                            in_process(args, folder, text, concurrency)
                        )
                        results.setdefault(("ovmsx", *key), []).append(
                            served(args, server, text, concurrency)
                        )
        finally:
            server.stop()
    unit = (
        "requests/s"
        if args.task == "embeddings"
        else f"queries/s ({args.documents} documents each)"
    )
    lines = [
        f"`{args.task}`: BERT-like random-weight model, hidden {args.hidden}, {args.layers} "
        f"layers, vocabulary {args.vocab}; short inputs {args.short} words, long {args.long}; "
        f"{args.seconds:g} s per measurement, {args.rounds} rounds, contenders alternating; "
        f"median (min-max) of the rounds, in {unit}.",
        "",
        "| input | concurrency | in-process | ovmsx | ratio |",
        "|---|---|---|---|---|",
    ]
    for length in lengths:
        for concurrency in args.concurrency:
            key = (length, str(concurrency))
            base, ours = results[("in-process", *key)], results[("ovmsx", *key)]
            ratio = statistics.median(ours) / statistics.median(base)
            lines.append(
                f"| {length} | {concurrency} | {spread(base)} | {spread(ours)} | {ratio:.2f}x |"
            )
    lines += ["", machine(["openvino", "openvino-genai"])]
    publish("\n".join(lines), f"encoders-{args.task}", args)


if __name__ == "__main__":
    main()
