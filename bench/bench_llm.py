"""ovmsx's LLM serving against openvino-genai driven in-process (the ceiling), side by side.

Each round runs, for each concurrency, both contenders one after the other with the same
settings (prompt length, output length, scheduler):

- ``in-process``: bench/llm_inprocess.py, ContinuousBatchingPipeline stepped by its own loop;
- ``ovmsx``: ``ovmsx --task text_generation`` on the same folder, loaded by aiperf (NVIDIA's
  LLM load generator, from the package index) over ``/v3/completions``, streamed.

Reported per concurrency: output tokens/s, time to first token and inter-token latency (means),
each as the median of the rounds with their spread, and ovmsx over in-process; and the server's
own CPU per streamed token (the serving cost: the ovmsx process, its engine excluded).

    pip install aiperf            # best in a venv of its own: --aiperf PATH
    python bench/bench_llm.py --model models/tiny --concurrency 1 8 32 --rounds 3 [--write]

Without --model a small folder is built (examples/llm/build_llm_folder.py).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from bench_serving import free_port
from perf_doc import add_write_arguments, machine, publish

ROOT = Path(__file__).resolve().parents[1]
SECTION = "llm"


def prompt_of(model: Path, tokens: int) -> str:
    """A prompt of exactly ``tokens`` tokens for the model's tokenizer."""
    import openvino_genai as genai

    tokenizer = genai.Tokenizer(str(model))
    words = "The quick brown fox jumps over the lazy dog. " * (tokens // 2 + 8)
    ids = tokenizer.encode(words, add_special_tokens=False).input_ids.data.tolist()[0][:tokens]
    return tokenizer.decode(ids)


def in_process(model: Path, concurrency: int, requests: int, args) -> dict:
    command = [
        sys.executable, str(ROOT / "bench" / "llm_inprocess.py"), str(model),
        "--concurrency", str(concurrency), "--requests", str(requests),
        "--output-tokens", str(args.output_tokens), "--prompt", args.prompt_text,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


class Server:
    def __init__(self, model: Path, workdir: Path) -> None:
        self.port = free_port()
        self.log = (workdir / "server.log").open("wb")
        command = [
            sys.executable, "-m", "ovmsx", "--model_name", "m", "--model_path", str(model),
            "--task", "text_generation", "--rest_port", str(self.port),
            "--rest_bind_address", "127.0.0.1", "--cache_size", "1",
            "--enable_prefix_caching", "false",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, cwd=workdir, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 120
        import urllib.request

        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v2/models/m/ready"):
                    break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("ovmsx did not start") from None
                time.sleep(0.2)
        self.psutil = psutil.Process(self.process.pid)

    def cpu_seconds(self) -> tuple[float, float]:
        """(the server's own CPU, its engine's CPU), in seconds."""
        own = sum(self.psutil.cpu_times()[:2])
        engines = sum(sum(child.cpu_times()[:2]) for child in self.psutil.children())
        return own, engines

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


def served(server: Server, concurrency: int, requests: int, args, workdir: Path) -> dict:
    artifacts = workdir / f"aiperf-{concurrency}-{time.monotonic_ns()}"
    command = [
        args.aiperf, "profile", "--model", "m", "--url", f"http://127.0.0.1:{server.port}/v3",
        "--endpoint-type", "completions", "--streaming", "--concurrency", str(concurrency),
        "--request-count", str(requests), "--synthetic-input-tokens-mean", str(args.input_tokens),
        "--synthetic-input-tokens-stddev", "0", "--output-tokens-mean", str(args.output_tokens),
        "--output-tokens-stddev", "0", "--extra-inputs", "ignore_eos:true",
        "--tokenizer", str(args.model), "--ui-type", "none", "--artifact-dir", str(artifacts),
        "--warmup-request-count", str(concurrency), "--use-server-token-count",
    ]  # fmt: skip
    before = server.cpu_seconds()
    client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, capture_output=True, text=True, check=True)
    client_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    after = server.cpu_seconds()
    client = (client_after.ru_utime + client_after.ru_stime) - (
        client_before.ru_utime + client_before.ru_stime
    )
    found = json.loads((artifacts / "profile_export_aiperf.json").read_text())
    # Every request generates exactly output_tokens (ignore_eos); the warm-up requests ran in
    # the CPU window too.
    tokens = (found["request_count"]["avg"] + concurrency) * args.output_tokens
    return {
        "output_tokens_per_s": found["output_token_throughput"]["avg"],
        "ttft_ms_mean": found["time_to_first_token"]["avg"],
        "itl_ms_mean": found["inter_token_latency"]["avg"],
        # Warm-up requests are in the CPU window too: counted as tokens as well.
        "server_cpu_us_per_token": (after[0] - before[0]) * 1e6 / tokens,
        "engine_cpu_us_per_token": (after[1] - before[1]) * 1e6 / tokens,
        # aiperf's own CPU (its start-up included), on the same cores as the server.
        "client_cpu_us_per_token": client * 1e6 / tokens,
    }


def _parameters(model: Path) -> str:
    """The model's parameter count, read from its OpenVINO IR's constants."""
    import numpy as np
    import openvino as ov

    xml = model / "openvino_model.xml"
    if not xml.exists():
        return "GGUF"
    count = 0
    for node in ov.Core().read_model(xml).get_ordered_ops():
        if node.get_type_name() == "Constant":
            count += int(np.prod(node.get_output_shape(0)))
    return f"{count / 1e6:,.0f}M parameters"


def spread(values: list[float], digits: int = 1) -> str:
    low, middle, high = min(values), statistics.median(values), max(values)
    return f"{middle:,.{digits}f} ({low:,.{digits}f}-{high:,.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", type=Path)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--input-tokens", type=int, default=128)
    parser.add_argument("--output-tokens", type=int, default=128)
    parser.add_argument("--requests-per-client", type=int, default=4)
    parser.add_argument("--min-requests", type=int, default=16)
    parser.add_argument(
        "--label", default="", help="names the docs section (llm-LABEL), e.g. tiny or mid"
    )
    parser.add_argument("--aiperf", default=shutil.which("aiperf") or "aiperf")
    add_write_arguments(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ovmsx-bench-llm-") as scratch:
        workdir = Path(scratch)
        if args.model is None:
            sys.path.insert(0, str(ROOT / "examples" / "llm"))
            from build_llm_folder import write_llm_folder

            args.model = write_llm_folder(workdir / "model")
        args.prompt_text = prompt_of(args.model, args.input_tokens)
        server = Server(args.model, workdir)
        results: dict[tuple[str, int], list[dict]] = {}
        try:
            for _ in range(args.rounds):
                for concurrency in args.concurrency:
                    requests = max(args.min_requests, concurrency * args.requests_per_client)
                    results.setdefault(("in-process", concurrency), []).append(
                        in_process(args.model, concurrency, requests, args)
                    )
                    results.setdefault(("ovmsx", concurrency), []).append(
                        served(server, concurrency, requests, args, workdir)
                    )
        finally:
            server.stop()
    lines = [
        f"Model: `{args.model.name}` ({_parameters(args.model)}); prompts of "
        f"{args.input_tokens} tokens, {args.output_tokens} tokens out (ignore_eos), "
        f"streamed; {args.rounds} rounds, contenders alternating; median (min-max) of the "
        "rounds.",
        "",
        "| concurrency | tokens/s in-process | tokens/s ovmsx | ratio | TTFT ms in-process | "
        "TTFT ms ovmsx | ITL ms in-process | ITL ms ovmsx | CPU µs/token: in-process | "
        "ovmsx engine | ovmsx server | aiperf |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for concurrency in args.concurrency:
        base = results[("in-process", concurrency)]
        ours = results[("ovmsx", concurrency)]
        rate_base = [r["output_tokens_per_s"] for r in base]
        rate_ours = [r["output_tokens_per_s"] for r in ours]
        lines.append(
            f"| {concurrency} | {spread(rate_base, 0)} | {spread(rate_ours, 0)} | "
            f"{statistics.median(rate_ours) / statistics.median(rate_base):.2f}x | "
            f"{spread([r['ttft_ms_mean'] for r in base], 2)} | "
            f"{spread([r['ttft_ms_mean'] for r in ours], 2)} | "
            f"{spread([r['itl_ms_mean'] for r in base], 2)} | "
            f"{spread([r['itl_ms_mean'] for r in ours], 2)} | "
            f"{spread([r['cpu_us_per_token'] for r in base], 0)} | "
            f"{spread([r['engine_cpu_us_per_token'] for r in ours], 0)} | "
            f"{spread([r['server_cpu_us_per_token'] for r in ours], 0)} | "
            f"{spread([r['client_cpu_us_per_token'] for r in ours], 0)} |"
        )
    lines += ["", machine(["openvino", "openvino-genai"])]
    publish("\n".join(lines), f"{SECTION}-{args.label}" if args.label else SECTION, args)


if __name__ == "__main__":
    main()
