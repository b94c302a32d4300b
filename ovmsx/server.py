"""Runs ovmsx: load the models and graphs, serve KServe gRPC, and stop cleanly on SIGINT/SIGTERM.

Stopping drains: the gRPC server stops taking new calls and lets in-flight ones finish (up to
``DRAIN_SECONDS``), then every model version is retired.
"""

from __future__ import annotations

import asyncio
import logging
import signal

from ovmsx import _core
from ovmsx.config.cli_options import ServerOptions
from ovmsx.config.servables import Servables
from ovmsx.frontend.grpc_server import create_server
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry

log = logging.getLogger("ovmsx.server")

DRAIN_SECONDS = 30.0
# glibc keeps freed blocks up to these sizes for reuse instead of returning them to the kernel
# (see csrc/core/allocator_tuning.h): requests then reuse warm memory for their tensors.
MMAP_THRESHOLD = 32 << 20  # glibc's own upper bound for its adaptive threshold
TRIM_THRESHOLD = 128 << 20


def _report_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("loading models failed", exc_info=task.exception())


async def serve(options: ServerOptions, servables: Servables) -> int:
    _core.tune_allocator(MMAP_THRESHOLD, TRIM_THRESHOLD)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    dispatcher = InferenceDispatcher(loop)
    registry = ServableRegistry(dispatcher, options.cache_dir)
    try:
        server, port = create_server(
            KServeService(registry),
            options.grpc_bind_addresses,
            options.port,
            options.grpc_channel_arguments,
        )
    except RuntimeError as error:  # grpc's "Failed to bind to address ..."
        log.error("%s", error)
        dispatcher.close()
        return 1
    await server.start()
    log.info("KServe gRPC on %s port %d", ",".join(options.grpc_bind_addresses), port)
    # ServerLive answers at once; ServerReady turns true when the initial load is done.
    loading = asyncio.create_task(
        registry.load(servables.models, servables.graphs, servables.pipelines, servables.libraries)
    )
    loading.add_done_callback(_report_failure)
    await stop.wait()
    log.info("stopping: draining in-flight requests")
    loading.cancel()
    await server.stop(grace=DRAIN_SECONDS)
    await registry.unload()
    dispatcher.close()
    log.info("stopped")
    return 0
