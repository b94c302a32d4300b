"""A fixed-seed pass of the engine fuzzer (bench/llm_engine_fuzz.py, which also runs long
passes): hostile bodies, four at a time, against one LLM; every answer is a 200 or a 4xx, and
the engine that served the first request serves the last."""

from __future__ import annotations

import sys
from pathlib import Path

from llm_graphs import llm_servable
from rest_process import HOST, rest_served
from test_engine_lifetime import engine_pids

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from llm_engine_fuzz import run

SEED = 11
REQUESTS = 400


def test_no_hostile_request_breaks_the_engine(tmp_path: Path) -> None:
    folder = llm_servable(tmp_path / "fuzzed", max_tokens_limit=64)
    with rest_served(["--model_name", "fuzzed", "--model_path", str(folder)], tmp_path) as server:
        statuses = run(HOST, server.rest_port, "fuzzed", REQUESTS, SEED)
        failures = [key for key in statuses if isinstance(key, tuple)]
        assert not failures, failures
        assert statuses[200] > REQUESTS // 5  # the bodies reach the engine, not only parsing
        assert len(engine_pids(server)) == 1
        assert "stopped (exit code" not in server.log()
