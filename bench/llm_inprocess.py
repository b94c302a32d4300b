"""openvino-genai's ContinuousBatchingPipeline driven in this process, as fast as it goes: the
ceiling ovmsx's LLM serving is measured against (bench/bench_llm.py).

C clients each keep one request in flight (a new one is added the moment one finishes), every
request asks for exactly N new tokens (ignore_eos), and the loop is the one a server's engine
runs: add requests, step, read what each handle produced. Reported: time to first token and
inter-token latency (mean over requests, and p50/p99), and output tokens per second over the
whole run.

    python bench/llm_inprocess.py MODEL --concurrency 8 --requests 64 --output-tokens 128
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass, field


@dataclass
class Timing:
    started: float
    tokens: list[float] = field(default_factory=list)


def run(
    model: str,
    prompts: list[str],
    concurrency: int,
    requests: int,
    output_tokens: int,
    cache_size: int = 1,
    max_num_seqs: int = 256,
    max_num_batched_tokens: int = 256,
) -> dict:
    import openvino_genai as genai

    scheduler = genai.SchedulerConfig()
    scheduler.cache_size = cache_size
    scheduler.max_num_seqs = max_num_seqs
    scheduler.max_num_batched_tokens = max_num_batched_tokens
    scheduler.enable_prefix_caching = False
    pipeline = genai.ContinuousBatchingPipeline(model, scheduler, "CPU")
    tokenizer = pipeline.get_tokenizer()
    encoded = [tokenizer.encode(p, add_special_tokens=False).input_ids for p in prompts]

    def config():
        c = genai.GenerationConfig()
        c.max_new_tokens = output_tokens
        c.ignore_eos = True
        c.apply_chat_template = False
        return c

    handles: dict[int, object] = {}
    timings: dict[int, Timing] = {}
    next_id = 0
    done: list[Timing] = []
    began = time.perf_counter()
    cpu = time.process_time()

    def add() -> None:
        nonlocal next_id
        now = time.perf_counter()
        handles[next_id] = pipeline.add_request(next_id, encoded[next_id % len(encoded)], config())
        timings[next_id] = Timing(now)
        next_id += 1

    while next_id < min(concurrency, requests):
        add()
    running = genai.GenerationStatus.RUNNING
    while handles:
        pipeline.step()
        now = time.perf_counter()
        for request_id in list(handles):
            handle = handles[request_id]
            while handle.can_read():
                for output in handle.read().values():
                    timings[request_id].tokens.extend([now] * len(output.generated_ids))
            if handle.get_status() != running:
                del handles[request_id]
                done.append(timings.pop(request_id))
                if next_id < requests:
                    add()
    seconds = time.perf_counter() - began
    result = summarize(done, seconds)
    result["cpu_us_per_token"] = (time.process_time() - cpu) * 1e6 / max(1, result["tokens"])
    return result


def summarize(done: list[Timing], seconds: float) -> dict:
    ttft = [(t.tokens[0] - t.started) * 1e3 for t in done if t.tokens]
    itl = [
        (t.tokens[-1] - t.tokens[0]) * 1e3 / (len(t.tokens) - 1) for t in done if len(t.tokens) > 1
    ]
    tokens = sum(len(t.tokens) for t in done)
    return {
        "requests": len(done),
        "tokens": tokens,
        "output_tokens_per_s": tokens / seconds,
        "ttft_ms_mean": statistics.fmean(ttft),
        "ttft_ms_p50": statistics.median(ttft),
        "itl_ms_mean": statistics.fmean(itl),
        "itl_ms_p50": statistics.median(itl),
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--output-tokens", type=int, default=128)
    parser.add_argument("--prompt", default="Tell me a story about a robot who learns to paint.")
    args = parser.parse_args()
    result = run(args.model, [args.prompt], args.concurrency, args.requests, args.output_tokens)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
