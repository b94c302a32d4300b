"""A load generator for streamed completions that takes next to no CPU: C threads, each sending
one request at a time over a plain HTTP connection and noting when each chunk of text arrives.

aiperf shares this machine's two CPUs with the server it measures and takes a good part of them
(bench_llm.py reports how much): this client shows what a server does when the load costs
nothing, beside aiperf's figures, not instead of them. Prints JSON: output tokens/s over the
run, mean time to first token and inter-token latency (ms), and this process's CPU seconds.

    python bench/llm_light_client.py --url http://127.0.0.1:8000/v1 --concurrency 8 \
        --requests 32 --prompt "..." --output-tokens 32

Tokens are counted as the server's usage says when it sends one (``stream_options``), else as
chunks carrying text (one token each for the ASCII text bench models write).
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time
from urllib.parse import urlsplit


def stream_one(url: str, body: bytes) -> tuple[float, list[float], int | None]:
    """(sent at, arrival time of each chunk with text, completion tokens from usage or None)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    started = time.perf_counter()
    connection.request(
        "POST", f"{parts.path}/completions", body, {"Content-Type": "application/json"}
    )
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"{url}: HTTP {response.status}: {response.read()[:200]!r}")
    arrivals: list[float] = []
    usage = None
    for line in response:
        if not line.startswith(b"data: "):
            continue
        if line.startswith(b"data: [DONE]"):
            break
        now = time.perf_counter()
        chunk = json.loads(line[6:])
        if chunk.get("usage"):
            usage = chunk["usage"]["completion_tokens"]
        if any(choice.get("text") for choice in chunk.get("choices", ())):
            arrivals.append(now)
    connection.close()
    return started, arrivals, usage


def run(url: str, concurrency: int, requests: int, prompt: str, output_tokens: int) -> dict:
    body = json.dumps(
        {
            "model": "m",
            "prompt": prompt,
            "max_tokens": output_tokens,
            "ignore_eos": True,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    ).encode()
    stream_one(url, body)  # warm-up
    lock = threading.Lock()
    left = [requests]
    ttft: list[float] = []
    itl: list[float] = []
    tokens = [0]

    def client() -> None:
        while True:
            with lock:
                if not left[0]:
                    return
                left[0] -= 1
            started, arrivals, usage = stream_one(url, body)
            with lock:
                tokens[0] += usage if usage is not None else len(arrivals)
                if arrivals:
                    ttft.append((arrivals[0] - started) * 1e3)
                if len(arrivals) > 1:
                    itl.append((arrivals[-1] - arrivals[0]) * 1e3 / (len(arrivals) - 1))

    cpu = time.process_time()
    began = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    return {
        "output_tokens_per_s": tokens[0] / seconds,
        "ttft_ms_mean": statistics.fmean(ttft),
        "itl_ms_mean": statistics.fmean(itl),
        "tokens": tokens[0],
        "client_cpu_s": time.process_time() - cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", required=True, help="the server's base URL, e.g. .../v1")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--output-tokens", type=int, default=32)
    args = parser.parse_args()
    found = run(args.url, args.concurrency, args.requests, args.prompt, args.output_tokens)
    print(json.dumps(found))


if __name__ == "__main__":
    main()
