"""ovmsx's /v3/embeddings and /v3/rerank against openvino-genai's TextEmbeddingPipeline and
TextRerankPipeline driven in-process on the same folder, side by side.

For each input length (short, long) and concurrency, each round runs both contenders one after
the other:

- ``in-process``: bench/encoders_inprocess.py, client threads sharing one pipeline;
- ``ovmsx``: ``ovmsx --task embeddings`` (or ``rerank``) on the same folder, loaded by
  bench/rest_load.py (keep-alive connections, one request at a time each) from this process.

- ``infinity`` (with ``--peer-python PYTHON``, a Python with ``infinity-emb[server,optimum]``):
  the same weights as a Hugging Face folder behind infinity's OpenAI embeddings API or its
  rerank API (``--peer-engine``: ``optimum`` runs them with ONNX Runtime, ``torch`` with
  PyTorch), loaded the same way. The model is then a ``transformers`` BertModel (or, to
  rerank, a BertForSequenceClassification) converted to OpenVINO for ovmsx and in-process
  (bench/encoder_peer_model.py).

One request is one text to embed, or one short query (``--short`` words, as a question is)
with ``--documents`` documents of the length measured to rerank. Reported: requests/s (or
documents/s for rerank) as the median of the rounds with their spread, and ovmsx over each
contender. Servers that batch answer in bursts; their rate is taken from the first answer in
the window to the last (rest_load's ``between_answers``), so a burst that falls just outside
the window does not count as nothing.

    python bench/bench_embeddings.py --task embeddings [--rounds 3] [--write]
    python bench/bench_embeddings.py --peer-python /venv-infinity/bin/python --label peer
    python bench/bench_embeddings.py --task rerank --peer-python /venv-infinity/bin/python

Without a peer, the folders are built by examples/rag/build_encoder_folders.py (random weights,
BERT-like, ``--hidden``/``--layers``: 384 and 6 by default, the size of small sentence-embedding
models); with one, by bench/encoder_peer_model.py. Rerank needs the peer's folder:
openvino-genai's TextRerankPipeline fails on the hand-built tokenizer of examples/rag.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_serving import free_port, wait_http_ready
from perf_doc import add_write_arguments, labelled, machine, publish
from rest_load import RestCase, measure

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "retrieval augmented generation finds documents and answers questions from them "


def text_of(words: int) -> str:
    return " ".join((SENTENCE * (words // 8 + 1)).split()[:words])


def in_process(args, folder: Path, text: str, concurrency: int) -> float:
    command = [
        sys.executable, str(ROOT / "bench" / "encoders_inprocess.py"), args.task, str(folder),
        "--concurrency", str(concurrency), "--seconds", str(args.seconds), "--text", text,
        "--documents", str(args.documents), "--query", args.query,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["requests_per_s"]


class Server:
    """A contender behind HTTP: ``command`` with ``{port}``, ready when ``ready_path`` answers,
    embeddings at ``path``."""

    def __init__(
        self,
        name: str,
        command: list[str],
        ready_path: str,
        path: str,
        workdir: Path,
        cwd: Path | None = None,
        environment: dict | None = None,
    ):
        self.name = name
        self.path = path
        self.port = free_port()
        self.log = (workdir / f"{name}.log").open("wb")
        command = [part.replace("{port}", str(self.port)) for part in command]
        self.process = subprocess.Popen(
            command,
            cwd=cwd or workdir,
            stdout=self.log,
            stderr=self.log,
            env={**os.environ, **(environment or {})},
        )
        ready = f"http://127.0.0.1:{self.port}{ready_path}"
        wait_http_ready(self.process, ready, name, Path(self.log.name))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


def ovmsx_server(task: str, folder: Path, workdir: Path) -> Server:
    command = [
        sys.executable, "-m", "ovmsx", "--model_name", "m", "--model_path", str(folder),
        "--task", task, "--rest_port", "{port}", "--rest_bind_address", "127.0.0.1",
    ]  # fmt: skip
    path = "/v3/embeddings" if task == "embeddings" else "/v3/rerank"
    return Server("ovmsx", command, "/v2/health/ready", path, workdir)


def infinity_server(python: str, engine: str, task: str, folder: Path, workdir: Path) -> Server:
    # The folder as "." from inside it: with an absolute local path this infinity release asks
    # optimum for the ONNX file by its absolute name, which optimum does not find.
    command = [
        python, "-m", "infinity_emb.cli", "v2", "--model-id", ".",
        "--served-model-name", "m", "--engine", engine, "--device", "cpu",
        "--host", "127.0.0.1", "--port", "{port}", "--batch-size", "32",
    ]  # fmt: skip
    quiet = {"DO_NOT_TRACK": "1", "INFINITY_ANONYMOUS_USAGE_STATS": "0"}  # no network here
    # infinity's rerank takes the body ovmsx's /v3/rerank takes (query, documents).
    path = "/embeddings" if task == "embeddings" else "/rerank"
    return Server("infinity", command, "/health", path, workdir, folder, quiet)


def served(args, server: Server, text: str, concurrency: int) -> float:
    if args.task == "embeddings":
        body = {"model": "m", "input": text}
    else:
        body = {"model": "m", "query": args.query, "documents": [text] * args.documents}
    request = RestCase(args.task, server.path, json.dumps(body).encode()).request_bytes(
        "127.0.0.1", server.port
    )
    rate, _ = asyncio.run(
        measure("127.0.0.1", server.port, request, concurrency, args.seconds, between_answers=True)
    )
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
    parser.add_argument("--peer-python", help="a Python with infinity-emb: adds infinity")
    parser.add_argument("--peer-engine", default="optimum", choices=("optimum", "torch"))
    parser.add_argument("--label", default="", help="names the docs section")
    add_write_arguments(parser)
    args = parser.parse_args()
    if args.task == "rerank" and not args.peer_python:
        # Its TextRerankPipeline fails with a shape error in the model on the folders of
        # examples/rag (their tokenizer is built by hand); the peer's folder is converted.
        parser.error("--task rerank needs --peer-python (and measures on the peer's folder)")
    args.query = text_of(args.short)  # rerank's query: short, as a question is
    sys.path.insert(0, str(ROOT / "examples" / "rag"))
    from build_encoder_folders import write_encoder_folders

    lengths = {"short": text_of(args.short), "long": text_of(args.long)}
    results: dict[tuple[str, str, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="ovmsx-bench-encoders-") as scratch:
        workdir = Path(scratch)
        servers = []
        if args.peer_python:
            command = [
                args.peer_python, str(ROOT / "bench" / "encoder_peer_model.py"),
                str(workdir / "peer"), "--hidden", str(args.hidden), "--layers",
                str(args.layers), "--heads", str(args.heads), "--vocab", str(args.vocab),
                "--task", args.task,
            ]  # fmt: skip
            subprocess.run(command, check=True, capture_output=True)
            folder = workdir / "peer" / "openvino"
            servers.append(
                infinity_server(
                    args.peer_python, args.peer_engine, args.task, workdir / "peer" / "hf", workdir
                )
            )
        else:
            folders = write_encoder_folders(
                workdir / "models", args.hidden, args.layers, args.heads, args.vocab
            )
            folder = folders["embed" if args.task == "embeddings" else "rerank"]
        servers.insert(0, ovmsx_server(args.task, folder, workdir))
        try:
            for _ in range(args.rounds):
                for length, text in lengths.items():
                    for concurrency in args.concurrency:
                        key = (length, str(concurrency))
                        results.setdefault(("in-process", *key), []).append(
                            in_process(args, folder, text, concurrency)
                        )
                        for server in servers:
                            results.setdefault((server.name, *key), []).append(
                                served(args, server, text, concurrency)
                            )
        finally:
            for server in servers:
                server.stop()
    contenders = ["in-process"] + [server.name for server in servers]
    if args.task == "rerank":  # documents scored per second: queries/s times their documents
        results = {key: [rate * args.documents for rate in rates] for key, rates in results.items()}
        unit = f"documents/s (queries of {args.documents} documents, one query per request)"
    else:
        unit = "requests/s (one text each)"
    queries = f" (queries {args.short} words)" if args.task == "rerank" else ""
    lines = [
        f"`{args.task}`: BERT-like random-weight model, hidden {args.hidden}, {args.layers} "
        f"layers, vocabulary {args.vocab}; short inputs {args.short} words, long {args.long}"
        f"{queries}; {args.seconds:g} s per measurement, {args.rounds} rounds, contenders "
        "alternating; "
        f"median (min-max) of the rounds, in {unit}.",
        "",
        "| input | concurrency | " + " | ".join(contenders) + " | "
        + " | ".join(f"ovmsx ÷ {name}" for name in contenders if name != "ovmsx") + " |",
        "|---|---|" + "---|" * (2 * len(contenders) - 1),
    ]  # fmt: skip
    for length in lengths:
        for concurrency in args.concurrency:
            key = (length, str(concurrency))
            medians = {name: statistics.median(results[(name, *key)]) for name in contenders}
            cells = [spread(results[(name, *key)]) for name in contenders]
            ratios = [
                f"{medians['ovmsx'] / medians[name]:.2f}x" for name in contenders if name != "ovmsx"
            ]
            lines.append(f"| {length} | {concurrency} | " + " | ".join(cells + ratios) + " |")
    lines += ["", machine(["openvino", "openvino-genai"])]
    publish("\n".join(lines), labelled(f"encoders-{args.task}", args.label), args)


if __name__ == "__main__":
    main()
