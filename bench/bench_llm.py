"""ovmsx's LLM serving against openvino-genai driven in-process (the ceiling) and, when
given, llama.cpp's OpenAI server on the same weights, side by side.

Each round runs, for each concurrency, every contender one after the other with the same
settings (prompt length, output length, scheduler):

- ``in-process``: bench/llm_inprocess.py, ContinuousBatchingPipeline stepped by its own loop;
- ``ovmsx``: ``ovmsx --task text_generation`` on the same model, loaded by aiperf (NVIDIA's
  LLM load generator, from the package index) over ``/v1/completions``, streamed;
- ``llama.cpp`` (with ``--llama-cpp-python PYTHON``, a .gguf model): ``python -m
  llama_cpp.server`` from llama-cpp-python, all CPUs as threads, loaded the same way.

``--client light`` loads the servers with bench/llm_light_client.py instead, which takes next to
no CPU: what the servers do when the load generator leaves them both CPUs.

Reported per concurrency and contender: output tokens/s, time to first token and inter-token
latency (means, as aiperf measures them), each as the median of the rounds with their spread,
the ratio to in-process and ovmsx's ratio to each; for ovmsx also the same two latencies as its
own /metrics histograms saw them (arrival to the engine step that made the first token, and
first to last token), which leave out the delivery of the chunks; and CPU per streamed token of
the serving process, of ovmsx's engine process, and of the load generator itself (which shares
the CPUs: ``--client-nice`` lowers its priority).

    pip install aiperf            # best in a venv of its own: --aiperf PATH
    python bench/bench_llm.py --model models/tiny --concurrency 1 8 32 --rounds 3 [--write]
    python bench/llm_gguf.py /tmp/mid.gguf --hidden 1024 --layers 16 --heads 16 --vocab 4096 \
        --tokenizer-dir /tmp/mid-tokenizer
    python bench/bench_llm.py --model /tmp/mid.gguf --tokenizer /tmp/mid-tokenizer \
        --llama-cpp-python /venv-llama/bin/python --label mid

Without --model a small folder is built (examples/llm/build_llm_folder.py).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from bench_serving import free_port, wait_http_ready
from perf_doc import add_write_arguments, labelled, machine, publish

ROOT = Path(__file__).resolve().parents[1]
SECTION = "llm"
# Requests/s aiperf may start: a pace, never a limit (see served()).
REQUEST_RATE = 500


def prompt_of(tokenizer_folder: Path, tokens: int) -> str:
    """A prompt of exactly ``tokens`` tokens for the model's tokenizer (its Hugging Face
    ``tokenizer.json``, or openvino-genai's tokenizer models in an OpenVINO folder)."""
    words = "The quick brown fox jumps over the lazy dog. " * (tokens // 2 + 8)
    if (tokenizer_folder / "tokenizer.json").exists():
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_folder / "tokenizer.json"))
        ids = tokenizer.encode(words, add_special_tokens=False).ids[:tokens]
        return tokenizer.decode(ids)
    import openvino_genai as genai

    tokenizer = genai.Tokenizer(str(tokenizer_folder))
    ids = tokenizer.encode(words, add_special_tokens=False).input_ids.data.tolist()[0][:tokens]
    return tokenizer.decode(ids)


def in_process(model: Path, concurrency: int, requests: int, args) -> dict:
    command = [
        sys.executable, str(ROOT / "bench" / "llm_inprocess.py"), str(model),
        "--concurrency", str(concurrency), "--requests", str(requests),
        "--output-tokens", str(args.output_tokens), "--prompt", args.prompt_text,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    # The one process both serves and computes: its CPU goes in the serving column.
    found["server_cpu_us_per_token"] = found.pop("cpu_us_per_token")
    return found


class Server:
    """A contender behind HTTP: its process, its base URL for aiperf, the CPU it used."""

    def __init__(
        self,
        name: str,
        command: list[str],
        ready_path: str,
        workdir: Path,
        counts_tokens: bool = True,
    ) -> None:
        self.name = name
        # Whether its streams end with usage; otherwise aiperf counts tokens with the tokenizer.
        self.counts_tokens = counts_tokens
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        command = [part.replace("{port}", str(self.port)) for part in command]
        self.log = (workdir / f"{name}.log").open("wb")
        self.process = subprocess.Popen(command, cwd=workdir, stdout=self.log, stderr=self.log)
        ready = f"http://127.0.0.1:{self.port}{ready_path}"
        wait_http_ready(self.process, ready, name, Path(self.log.name))
        self.psutil = psutil.Process(self.process.pid)

    def cpu_seconds(self) -> tuple[float, float]:
        """(the serving process's CPU, its children's: ovmsx's engine), in seconds."""
        own = sum(self.psutil.cpu_times()[:2])
        engines = sum(sum(child.cpu_times()[:2]) for child in self.psutil.children())
        return own, engines

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


def ovmsx_server(model: Path, workdir: Path) -> Server:
    command = [
        sys.executable, "-m", "ovmsx", "--model_name", "m", "--model_path", str(model),
        "--task", "text_generation", "--rest_port", "{port}",
        "--rest_bind_address", "127.0.0.1", "--cache_size", "1",
        "--enable_prefix_caching", "false", "--metrics_enable",
    ]  # fmt: skip
    return Server("ovmsx", command, "/v2/models/m/ready", workdir)


def latency_sums(server: Server) -> dict[str, tuple[float, float]]:
    """ovmsx's own time to first token and time per output token (its /metrics histograms:
    from a request's arrival to the engine step that made its first token, and between its
    first and last tokens), as (sum in µs, count): what the server saw, the client's share of
    the CPUs and the delivery of the chunks left out."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics") as answer:
        text = answer.read().decode()
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:  # one servable: one series per name
            values[sample.name] = sample.value
    found = {}
    for key in ("time_to_first_token", "time_per_output_token"):
        name = f"ovmsx_llm_{key}_us"
        if f"{name}_count" in values:
            found[key] = (values[f"{name}_sum"], values[f"{name}_count"])
    return found


def llama_cpp_server(python: str, model: Path, workdir: Path) -> Server:
    """llama-cpp-python's OpenAI server on the GGUF file, with every CPU as a thread (its
    default is half of them) and a context as long as ovmsx's KV cache holds. It serves one
    request at a time: concurrent ones wait their turn."""
    threads = str(os.cpu_count() or 1)
    command = [
        python, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "m",
        "--host", "127.0.0.1", "--port", "{port}", "--n_ctx", "2048",
        "--n_threads", threads, "--n_threads_batch", threads,
        # Its default cuts a streaming answer short when the next request arrives; here every
        # request runs to its end, one after the other (this server does not batch them).
        "--interrupt_requests", "false",
    ]  # fmt: skip
    # llama-cpp-python's streams carry no usage: aiperf counts the tokens itself.
    return Server("llama.cpp", command, "/v1/models", workdir, counts_tokens=False)


def aiperf_load(server: Server, concurrency: int, requests: int, args, workdir: Path):
    """The aiperf command for one measurement, and how to read its figures once it ran."""
    artifacts = workdir / f"aiperf-{server.name}-{concurrency}-{time.monotonic_ns()}"
    command = [
        args.aiperf, "profile", "--model", "m", "--url", server.base_url,
        "--endpoint-type", "completions", "--streaming", "--concurrency", str(concurrency),
        "--request-count", str(requests), "--synthetic-input-tokens-mean", str(args.input_tokens),
        "--synthetic-input-tokens-stddev", "0", "--output-tokens-mean", str(args.output_tokens),
        "--output-tokens-stddev", "0", "--extra-inputs", "ignore_eos:true",
        "--tokenizer", str(args.tokenizer), "--ui-type", "none", "--artifact-dir", str(artifacts),
        "--warmup-request-count", str(concurrency),
        # With a concurrency alone, aiperf's scheduler spins while every slot is busy (a yield
        # loop in its timing process): at concurrency 1 it took most of a CPU from the server
        # measured. A request rate far above what any contender serves still starts each
        # request as soon as a slot frees (within 2 ms), and the scheduler sleeps in between.
        "--request-rate", str(REQUEST_RATE),
        # One worker and one record processor hold 32 streams; aiperf's defaults start more
        # processes than this machine has CPUs, and they take CPU from the server measured.
        "--workers-max", "1", "--record-processors", "1",
        "--no-server-metrics", "--no-gpu-telemetry",
    ]  # fmt: skip
    if server.counts_tokens:
        command.append("--use-server-token-count")

    def figures(_output: str) -> tuple[dict, int]:
        found = json.loads((artifacts / "profile_export_aiperf.json").read_text())
        if "output_token_throughput" not in found:
            errors = found.get("error_summary") or found.get("errors") or sorted(found)
            raise RuntimeError(f"aiperf measured nothing on {server.name}: {errors}")
        measured = {
            "output_tokens_per_s": found["output_token_throughput"]["avg"],
            "ttft_ms_mean": found["time_to_first_token"]["avg"],
            "itl_ms_mean": found["inter_token_latency"]["avg"],
        }
        return measured, int(found["request_count"]["avg"]) + concurrency  # warm-ups too

    return command, figures


def light_load(server: Server, concurrency: int, requests: int, args, workdir: Path):
    """bench/llm_light_client.py's command, and how to read its figures."""
    command = [
        sys.executable, str(ROOT / "bench" / "llm_light_client.py"), "--url", server.base_url,
        "--concurrency", str(concurrency), "--requests", str(requests),
        "--prompt", args.prompt_text, "--output-tokens", str(args.output_tokens),
    ]  # fmt: skip

    def figures(output: str) -> tuple[dict, int]:
        found = json.loads(output)
        measured = {
            key: found[key] for key in ("output_tokens_per_s", "ttft_ms_mean", "itl_ms_mean")
        }
        return measured, requests + 1  # its warm-up request too

    return command, figures


def served(server: Server, concurrency: int, requests: int, args, workdir: Path) -> dict:
    load = light_load if args.client == "light" else aiperf_load
    command, figures = load(server, concurrency, requests, args, workdir)
    own_view = server.name == "ovmsx"
    sums_before = latency_sums(server) if own_view else {}
    before = server.cpu_seconds()
    client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=(lambda: os.nice(args.client_nice)) if args.client_nice else None,
    )
    client_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    after = server.cpu_seconds()
    seen: dict[str, float] = {}
    if own_view:  # its series appear with its first request: none before is all zeros
        for key, (total, count) in latency_sums(server).items():
            before_total, before_count = sums_before.get(key, (0.0, 0.0))
            if count > before_count:
                seen[key] = (total - before_total) / (count - before_count) / 1e3
    client = (client_after.ru_utime + client_after.ru_stime) - (
        client_before.ru_utime + client_before.ru_stime
    )
    measured, answered = figures(done.stdout)
    # Every request generates exactly output_tokens (ignore_eos); the warm-up requests ran in
    # the CPU window too, so they count as tokens as well.
    tokens = answered * args.output_tokens
    return {
        **measured,
        "server_ttft_ms_mean": seen.get("time_to_first_token"),
        "server_itl_ms_mean": seen.get("time_per_output_token"),
        "server_cpu_us_per_token": (after[0] - before[0]) * 1e6 / tokens,
        "engine_cpu_us_per_token": (after[1] - before[1]) * 1e6 / tokens,
        # The load generator's own CPU (its start-up included), on the same cores as the server.
        "client_cpu_us_per_token": client * 1e6 / tokens,
    }


def llama_cpp_version(python: str | None) -> str:
    if not python:
        return ""
    asked = [python, "-c", "import llama_cpp; print(llama_cpp.__version__)"]
    return f", llama-cpp-python {subprocess.check_output(asked, text=True).strip()}"


def _parameters(model: Path) -> str:
    """The model's parameter count, from its GGUF tensors or its OpenVINO IR's constants."""
    import numpy as np

    if model.suffix == ".gguf":
        from gguf import GGUFReader

        count = sum(int(tensor.n_elements) for tensor in GGUFReader(model).tensors)
    else:
        import openvino as ov

        count = 0
        for node in ov.Core().read_model(model / "openvino_model.xml").get_ordered_ops():
            if node.get_type_name() == "Constant":
                count += int(np.prod(node.get_output_shape(0)))
    if count < 1e6:
        return f"{count / 1e3:,.0f}K parameters"
    return f"{count / 1e6:,.0f}M parameters"


def spread(values: list[float], digits: int = 1) -> str:
    if not values:
        return "-"
    low, middle, high = min(values), statistics.median(values), max(values)
    return f"{middle:,.{digits}f} ({low:,.{digits}f}-{high:,.{digits}f})"


def table(results: dict[tuple[str, int], list[dict]], contenders: list[str], args) -> list[str]:
    lines = [
        "| concurrency | contender | tokens/s | ÷ in-process | ovmsx ÷ it | TTFT ms | ITL ms | "
        "TTFT ms, server's view | ITL ms, server's view | "
        f"CPU µs/token: serving process | engine process | {args.client} |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for concurrency in args.concurrency:
        median_rate = {
            name: statistics.median(r["output_tokens_per_s"] for r in results[name, concurrency])
            for name in contenders
        }
        for name in contenders:
            rounds = results[name, concurrency]

            def column(key: str, digits: int, rounds=rounds) -> str:
                return spread([r[key] for r in rounds if r.get(key) is not None], digits)

            lines.append(
                f"| {concurrency} | {name} | {column('output_tokens_per_s', 0)} | "
                f"{median_rate[name] / median_rate['in-process']:.2f}x | "
                + ("" if name == "ovmsx" else f"{median_rate['ovmsx'] / median_rate[name]:.2f}x")
                + f" | {column('ttft_ms_mean', 2)} | {column('itl_ms_mean', 2)} | "
                f"{column('server_ttft_ms_mean', 2)} | {column('server_itl_ms_mean', 2)} | "
                f"{column('server_cpu_us_per_token', 0)} | {column('engine_cpu_us_per_token', 0)} "
                f"| {column('client_cpu_us_per_token', 0)} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", type=Path, help="an OpenVINO LLM folder or a .gguf file")
    parser.add_argument(
        "--tokenizer", type=Path, help="a Hugging Face tokenizer folder (default: --model)"
    )
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
    parser.add_argument(
        "--client",
        choices=("aiperf", "light"),
        default="aiperf",
        help="the load generator: aiperf, or bench/llm_light_client.py (next to no CPU)",
    )
    parser.add_argument(
        "--client-nice", type=int, default=0, help="run the client at this nice level (e.g. 19)"
    )
    parser.add_argument(
        "--llama-cpp-python",
        metavar="PYTHON",
        help="a Python with llama-cpp-python[server]: adds llama.cpp (needs a .gguf --model)",
    )
    add_write_arguments(parser)
    args = parser.parse_args()
    if args.llama_cpp_python and (args.model is None or args.model.suffix != ".gguf"):
        parser.error("--llama-cpp-python needs --model FILE.gguf: both serve the same weights")
    with tempfile.TemporaryDirectory(prefix="ovmsx-bench-llm-") as scratch:
        workdir = Path(scratch)
        if args.model is None:
            sys.path.insert(0, str(ROOT / "examples" / "llm"))
            from build_llm_folder import write_llm_folder

            args.model = write_llm_folder(workdir / "model")
        if args.tokenizer is None:
            if args.model.suffix == ".gguf":
                parser.error("a .gguf --model needs --tokenizer: see llm_gguf.py --tokenizer-dir")
            args.tokenizer = args.model
        args.prompt_text = prompt_of(args.tokenizer, args.input_tokens)
        # Read now: a folder built here is gone once the runs end.
        model = f"`{args.model.name}` ({_parameters(args.model)})"
        servers = [ovmsx_server(args.model, workdir)]
        if args.llama_cpp_python:
            servers.append(llama_cpp_server(args.llama_cpp_python, args.model, workdir))
        results: dict[tuple[str, int], list[dict]] = {}
        try:
            for _ in range(args.rounds):
                for concurrency in args.concurrency:
                    requests = max(args.min_requests, concurrency * args.requests_per_client)
                    results.setdefault(("in-process", concurrency), []).append(
                        in_process(args.model, concurrency, requests, args)
                    )
                    for server in servers:
                        results.setdefault((server.name, concurrency), []).append(
                            served(server, concurrency, requests, args, workdir)
                        )
        finally:
            for server in servers:
                server.stop()
    contenders = ["in-process"] + [server.name for server in servers]
    client = "aiperf" if args.client == "aiperf" else "bench/llm_light_client.py"
    niced = f" at nice {args.client_nice}" if args.client_nice else ""
    lines = [
        f"Model: {model}; prompts of "
        f"{args.input_tokens} tokens, {args.output_tokens} tokens out (ignore_eos), "
        f"streamed; load from {client}{niced}; {args.rounds} rounds, contenders alternating; "
        "median (min-max) of the rounds.",
        "",
        *table(results, contenders, args),
        "",
        machine(["openvino", "openvino-genai"]) + llama_cpp_version(args.llama_cpp_python),
    ]
    publish("\n".join(lines), labelled(SECTION, args.label), args)


if __name__ == "__main__":
    main()
