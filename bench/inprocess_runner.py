"""ovmsx's serving path without the network: ``KServeService.model_infer_now`` and, when it
defers, the coroutine it returns — what the gRPC transport calls — in one process.

Measures what the server itself costs around OpenVINO for a model, so that a gap between
ovmsx over gRPC and benchmark_app can be split into "server" and "transport" (benchmark_app
moves no data over any network).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from bench_models import BenchModel
from infer_request_gen import build_request

from ovmsx import _core
from ovmsx.config import load_config
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry
from ovmsx.server import MMAP_THRESHOLD, TRIM_THRESHOLD


async def _measure(config: Path, model: BenchModel, concurrency: int, seconds: float) -> float:
    _core.tune_allocator(MMAP_THRESHOLD, TRIM_THRESHOLD)  # as the server does at start
    dispatcher = InferenceDispatcher(asyncio.get_running_loop())
    registry = ServableRegistry(dispatcher)
    await registry.load([m for m in load_config(config).models if m.name == model.name])
    service = KServeService(registry)
    message = build_request(model.name, model.inputs).SerializeToString()

    async def one() -> None:
        answer = service.model_infer_now(message)
        if not isinstance(answer, bytes):
            await answer(None)  # no call context: the benchmark's requests are all valid

    async def client(deadline: float) -> int:
        done = 0
        while time.perf_counter() < deadline:
            await one()
            done += 1
        return done

    await asyncio.gather(*(one() for _ in range(concurrency)))  # warm up every infer request
    start = time.perf_counter()
    counts = await asyncio.gather(*(client(start + seconds) for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    await registry.unload()
    dispatcher.close()
    return sum(counts) / elapsed


def run_inprocess(config: Path, model: BenchModel, concurrency: int, seconds: float) -> float:
    """Inferences per second with ``concurrency`` requests always in flight."""
    return asyncio.run(_measure(config, model, concurrency, seconds))
