"""Runs ovmsx: load the models and graphs, serve KServe gRPC, and stop cleanly on SIGINT/SIGTERM.

Stopping drains: the gRPC server stops taking new calls and lets in-flight ones finish (up to
``DRAIN_SECONDS``), then every model version is retired.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import TYPE_CHECKING

from ovmsx import _core
from ovmsx.config.cli_options import ServerOptions
from ovmsx.config.servables import Servables
from ovmsx.frontend.grpc_server import create_server
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.servables import compile_defaults
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry
from ovmsx.worker_role import WorkerRole

if TYPE_CHECKING:
    from ovmsx.frontend.grpc_core import CoreServer

log = logging.getLogger("ovmsx.server")

DRAIN_SECONDS = 30.0
# glibc keeps freed blocks up to these sizes for reuse instead of returning them to the kernel
# (see csrc/core/allocator_tuning.h): requests then reuse warm memory for their tensors.
MMAP_THRESHOLD = 32 << 20  # glibc's own upper bound for its adaptive threshold
TRIM_THRESHOLD = 128 << 20


def _report_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("loading models failed", exc_info=task.exception())


def set_cpu_defaults(workers: int) -> None:
    """What CPU models are compiled with unless their plugin_config says otherwise.

    - ``ENABLE_CPU_PINNING: NO``: quick models infer on the thread that has the request (the
      gRPC polling thread), and pinning ties that thread to one core. Measured with add_one
      [1,10] under perf_analyzer at concurrency 4: its blocking inference averaged 200-370 µs
      with pinning, 13-27 µs without (OVMS's tuning guide also advises it for mixed loads).
    - With ``--grpc_workers N``, each process's share of the cores for OpenVINO's threads.
    """
    defaults = {"ENABLE_CPU_PINNING": "NO"}
    if workers > 1:
        threads = max(1, (os.cpu_count() or 1) // workers)
        defaults["INFERENCE_NUM_THREADS"] = str(threads)
        log.info("CPU models get INFERENCE_NUM_THREADS %d unless plugin_config sets it", threads)
    compile_defaults.set_defaults("CPU", defaults)


async def _start_server(
    options: ServerOptions, service: KServeService, reuse_port: bool
) -> CoreServer | None:
    try:
        server, port = create_server(
            service,
            options.grpc_bind_addresses,
            options.port,
            options.grpc_channel_arguments,
            reuse_port=reuse_port,
        )
    except RuntimeError as error:  # grpc's "Failed to bind to address ..."
        log.error("%s", error)
        return None
    await server.start()
    log.info("KServe gRPC on %s port %d", ",".join(options.grpc_bind_addresses), port)
    return server


async def _loaded_or_stopped(loading: asyncio.Task, stop: asyncio.Event) -> None:
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait((loading, stopping), return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()


async def serve(
    options: ServerOptions, servables: Servables, role: WorkerRole | None = None
) -> int:
    """Serve until SIGINT/SIGTERM; the exit code. ``role`` is set in a ``--grpc_workers``
    process (ovmsx/workers.py): the port is shared, and only the first worker listens before
    its models are loaded."""
    _core.tune_allocator(MMAP_THRESHOLD, TRIM_THRESHOLD)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    set_cpu_defaults(options.grpc_workers if role is not None else 1)

    dispatcher = InferenceDispatcher(loop)
    registry = ServableRegistry(dispatcher, options.cache_dir)
    service = KServeService(registry)
    server: CoreServer | None = None
    loading: asyncio.Task | None = None
    code = 0
    try:
        if role is None or role.binds_before_loading:
            server = await _start_server(options, service, reuse_port=role is not None)
            if server is None:
                return 1
        if role is not None:
            await role.first_worker_loaded(stop)
        if not stop.is_set():
            # ServerLive answers at once; ServerReady turns true when the initial load is done.
            loading = asyncio.create_task(
                registry.load(
                    servables.models, servables.graphs, servables.pipelines, servables.libraries
                )
            )
            loading.add_done_callback(_report_failure)
        if role is not None and loading is not None:
            await _loaded_or_stopped(loading, stop)
            if server is None and not stop.is_set():
                server = await _start_server(options, service, reuse_port=True)
                if server is None:
                    return 1
            if not stop.is_set():
                role.report_ready()
        await stop.wait()
        log.info("stopping: draining in-flight requests")
    finally:
        if loading is not None:
            loading.cancel()
        if not await _shut_down(server, registry, dispatcher):
            code = 1
    log.info("stopped")
    return code


async def _shut_down(
    server: CoreServer | None, registry: ServableRegistry, dispatcher: InferenceDispatcher
) -> bool:
    """Drain and stop the server, retire every servable, stop watching completions; each step
    runs even if one before it failed. Whatever path leads here, the threads ovmsx started
    (gRPC polling, graph workers) end before the interpreter does: CPython ends a thread that
    asks for the GIL while it finalizes, unwinding its C++ frames (pybind11 calls and their
    Python references) without the GIL."""
    steps = [registry.unload]
    if server is not None:
        steps.insert(0, lambda: server.stop(grace=DRAIN_SECONDS))
    ok = True
    for step in steps:
        try:
            await step()
        except Exception:
            log.exception("stopping failed")
            ok = False
    dispatcher.close()
    return ok
