"""Hostile /v3 requests against one LLM servable: every answer must be a 200 or a 4xx, and the
engine must be the same process at the end (none killed, none wedged).

The bodies mix the fields that reach openvino-genai (lengths, penalties, sampling, beam search,
stop strings, logprobs and echo, assisted decoding, structured output, tokenize's lengths and
padding) with values at and past every bound, sent a few at a time so that they share engine
steps. A seed fixes the sequence: a failure replays with the same ``--seed``.

    python bench/llm_engine_fuzz.py --requests 20000 --seed 7    # builds a tiny LLM, serves it

tests/genai/test_engine_fuzz.py runs a short, fixed-seed pass in the suite.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path

INTS = [0, 1, 2, 3, 5, 17, 64, -1, 2**31 - 1, 2**31, 2**32, 2**63, 10**9, 10**7]
FLOATS = [0, 0.0, -0.0, 1e-30, 0.5, 1, 1.0, 1.5, 2, -2, 2.0001, 1e30, -1e30, 0.9999]
STRINGS = ["", "a", " ", "e", "\n", "</s>", "<|endoftext|>", "ü", "a" * 300]
ODD = [None, True, False, [], {}, "1", [1], {"a": 1}]

# Each field with the values worth trying beside the odd ones.
FIELDS: dict[str, list] = {
    "max_tokens": INTS,
    "max_completion_tokens": INTS,
    "temperature": FLOATS,
    "top_p": FLOATS,
    "top_k": INTS,
    "min_p": FLOATS,
    "seed": INTS,
    "repetition_penalty": FLOATS,
    "frequency_penalty": FLOATS,
    "presence_penalty": FLOATS,
    "length_penalty": FLOATS,
    "best_of": [1, 2, 3, 4, 20, 21],
    "n": [1, 2, 3, 4],
    "stop": [*STRINGS, [""], ["a", "e"], [""] * 3, ["a"] * 17, [" ", "\n", "o"]],
    "ignore_eos": [True, False],
    "include_stop_str_in_output": [True, False],
    "logprobs": [1, 2, 0, True, False],
    "echo": [True, False],
    "skip_special_tokens": [True, False],
    "num_assistant_tokens": INTS,
    "max_ngram_size": INTS,
    "assistant_confidence_threshold": FLOATS,
    "stream": [True, False],
    "stream_options": [{"include_usage": True}, {"continuous_usage_stats": True}, {"x": 1}],
}
TOKENIZE_FIELDS: dict[str, list] = {
    "max_length": INTS,
    "pad_to_max_length": [True, False],
    "add_special_tokens": [True, False],
    "padding_side": ["left", "right", "middle"],
}


def _schema(rng: random.Random, depth: int = 0) -> object:
    kind = rng.choice(["string", "integer", "number", "boolean", "object", "array", "enum", "bad"])
    if kind == "object" and depth < 4:
        count = rng.choice([0, 1, 3, 40])
        return {
            "type": "object",
            "properties": {f"k{i}": _schema(rng, depth + 1) for i in range(count)},
            "required": [f"k{i}" for i in range(count) if rng.random() < 0.5],
        }
    if kind == "array" and depth < 4:
        return {"type": "array", "items": _schema(rng, depth + 1), "maxItems": rng.choice(INTS)}
    if kind == "enum":
        return {"enum": rng.choice([[], ["a"], [1, "b", None], [f"v{i}" for i in range(300)]])}
    if kind == "bad":
        return rng.choice([{"type": "nope"}, {"$ref": "#/nowhere"}, {"pattern": "("}, {"type": 1}])
    return {"type": kind if kind not in ("object", "array") else "string"}


def _response_format(rng: random.Random) -> object:
    form = rng.choice(["json_object", "json_schema", "text", "structural", "odd"])
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "x", "schema": _schema(rng)}}
    if form == "structural":
        return {"type": "const_string", "value": rng.choice(STRINGS)}
    if form == "odd":
        return rng.choice([*ODD, {"type": "json_schema"}, {"type": "regex", "pattern": "[a-z]+"}])
    return {"type": form}


def _value(rng: random.Random, values: list) -> object:
    return rng.choice(ODD) if rng.random() < 0.1 else rng.choice(values)


def request_body(rng: random.Random, model: str) -> tuple[str, dict]:
    """One random request: its path and JSON body."""
    endpoint = rng.choice(["chat", "chat", "completions", "completions", "tokenize"])
    if endpoint == "tokenize":
        body: dict = {"model": model, "text": rng.choice(["hello", ["a", "b c"], "x" * 500])}
        for name in rng.sample(sorted(TOKENIZE_FIELDS), rng.randint(0, len(TOKENIZE_FIELDS))):
            body[name] = _value(rng, TOKENIZE_FIELDS[name])
        return "/v3/tokenize", body
    body = {"model": model}
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": rng.choice([*STRINGS[1:], "hi there"])}]
    else:
        body["prompt"] = rng.choice(["hello", "a b c d e", "x" * 200])
    for name in rng.sample(sorted(FIELDS), rng.randint(0, 8)):
        body[name] = _value(rng, FIELDS[name])
    if rng.random() < 0.25:
        body["response_format"] = _response_format(rng)
    return f"/v3/{endpoint}" if endpoint == "completions" else "/v3/chat/completions", body


def send(host: str, port: int, path: str, body: dict) -> int:
    """The status of one request, its whole answer read (a stream to its end)."""
    connection = HTTPConnection(host, port, timeout=120)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
        streamed = body.get("stream") is True and path != "/v3/tokenize"
        if response.status == 200 and streamed and b'data: {"error"' in answer:
            return 599  # the stream failed after it began
        return response.status
    finally:
        connection.close()


def run(host: str, port: int, model: str, requests: int, seed: int, workers: int = 4) -> Counter:
    """Send ``requests`` random bodies; the count of each status, and a sample failing body
    under the key ("failed", status, body) for any status that is neither 200 nor 4xx."""
    rng = random.Random(seed)
    bodies = [request_body(rng, model) for _ in range(requests)]
    statuses: Counter = Counter()
    with ThreadPoolExecutor(workers) as pool:
        results = pool.map(lambda item: send(host, port, *item), bodies)
        for (path, body), status in zip(bodies, results, strict=True):
            statuses[status] += 1
            if not (status == 200 or 400 <= status < 500):
                statuses[("failed", status, path, json.dumps(body))] += 1
    return statuses


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, help="a running server's REST port (else one starts)")
    parser.add_argument("--model", default="fuzzed")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(root / "tests" / name) for name in ("genai", "rest", "serving")]
    if args.port:
        statuses = run("127.0.0.1", args.port, args.model, args.requests, args.seed, args.workers)
    else:
        from llm_graphs import llm_servable
        from rest_process import HOST, rest_served

        with tempfile.TemporaryDirectory() as workdir:
            folder = llm_servable(Path(workdir) / args.model, max_tokens_limit=64)
            command = ["--model_name", args.model, "--model_path", str(folder)]
            with rest_served(command, Path(workdir)) as server:
                statuses = run(HOST, server.rest_port, args.model, args.requests, args.seed)
                restarted = "stopped (exit code" in server.log()
        if restarted:
            statuses["engine restarted"] += 1
    for key, count in sorted(statuses.items(), key=str):
        print(count, key)
    return 1 if any(isinstance(key, tuple) or key == "engine restarted" for key in statuses) else 0


if __name__ == "__main__":
    sys.exit(main())
