"""Runs ovmsx: load the models and graphs, serve KServe gRPC (``--port``) and REST
(``--rest_port``) on one event loop, and stop cleanly on SIGINT/SIGTERM.

Stopping drains: the servers stop taking new calls and let in-flight ones finish (up to
``DRAIN_SECONDS``, or ``OVMSX_DRAIN_SECONDS``), then every model version is retired.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import signal
from typing import TYPE_CHECKING

from ovmsx import _core
from ovmsx.config.cli_options import ServerOptions
from ovmsx.config.config_watch import ConfigWatcher
from ovmsx.config.servables import Servables
from ovmsx.config_api import ConfigService
from ovmsx.frontend.grpc_health import HealthService
from ovmsx.frontend.grpc_server import create_server
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.frontend.memory_budget import MemoryBudget
from ovmsx.frontend.request_observer import RequestObserver
from ovmsx.frontend.rest_context import RestContext
from ovmsx.genai.calculators import register as register_genai_calculators
from ovmsx.metrics.serving_metrics import ServingMetrics
from ovmsx.metrics.settings import MetricsSettings
from ovmsx.servables import compile_defaults
from ovmsx.servables.config_status import statuses
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.model_version import VersionState
from ovmsx.servables.registry import ServableRegistry
from ovmsx.worker_role import WorkerRole

if TYPE_CHECKING:
    from ovmsx.frontend.grpc_transport import GrpcServer
    from ovmsx.frontend.rest_server import RestServer

# The servers of one process: gRPC (None without --port) and REST (None without --rest_port).
Frontends = tuple["GrpcServer | None", "RestServer | None"]

log = logging.getLogger("ovmsx.server")

# How long a stop lets calls in flight finish before it cancels them. Kubernetes kills a pod
# terminationGracePeriodSeconds (30 s by default) after SIGTERM: a deployment with a longer
# period, or one that wants its pods gone sooner, sets OVMSX_DRAIN_SECONDS. An open gRPC stream
# counts as in flight until the drain ends.
DRAIN_SECONDS = 30.0


def _drain_seconds() -> float:
    text = os.environ.get("OVMSX_DRAIN_SECONDS")
    if not text:
        return DRAIN_SECONDS
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value >= 0):
        log.warning("OVMSX_DRAIN_SECONDS=%r is ignored: not a number of seconds", text)
        return DRAIN_SECONDS
    return value


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
    options: ServerOptions,
    service: KServeService,
    health: HealthService,
    reuse_port: bool,
    budget: MemoryBudget,
) -> GrpcServer | None:
    try:
        server, port = create_server(
            service,
            options.grpc_bind_addresses,
            options.port,
            options.grpc_channel_arguments,
            reuse_port=reuse_port,
            health=health,
            budget=budget,
        )
    except RuntimeError as error:  # grpc's "Failed to bind to address ..."
        log.error("%s", error)
        return None
    await server.start()
    log.info("Started gRPC server on port %d", port)
    return server


async def _start_rest(
    options: ServerOptions, context: RestContext, reuse_port: bool, budget: MemoryBudget
) -> RestServer | None:
    from ovmsx.frontend.cors import Cors
    from ovmsx.frontend.rest_app import RestApp  # the HTTP library loads only when REST serves
    from ovmsx.frontend.rest_server import RestServer
    from ovmsx.frontend.v3_api import V3App

    if options.rest_workers is not None:
        log.warning(
            "--rest_workers is accepted for compatibility and ignored: REST is served on the "
            "event loop of each serving process; --grpc_workers sets how many processes serve"
        )
    address = options.rest_bind_address
    try:
        rest = RestServer(
            RestApp(context),
            address,
            options.rest_port,
            reuse_port,
            budget,
            request_timeout=options.rest_request_timeout,
            v3=V3App(context.registry, options.api_key, context.observer),
            cors=Cors(
                options.allowed_origins,
                options.allowed_methods,
                options.allowed_headers,
                options.allow_credentials,
            ),
        )
    except OSError as error:
        log.error("Failed to start REST server on %s:%d: %s", address, options.rest_port, error)
        return None
    await rest.start()
    log.info("REST server listening on %s:%d", address, rest.port)
    return rest


async def _start_frontends(
    options: ServerOptions,
    service: KServeService,
    health: HealthService,
    rest_context: RestContext,
    reuse_port: bool,
) -> Frontends | None:
    """Start gRPC (``--port``) and REST (``--rest_port``); None if either fails to start.
    Both count request bytes in flight against one budget (``--grpc_memory_quota``)."""
    budget = MemoryBudget(options.memory_quota)
    server = None
    if options.port:
        server = await _start_server(options, service, health, reuse_port, budget)
        if server is None:
            return None
    rest = None
    if options.rest_port:
        rest = await _start_rest(options, rest_context, reuse_port, budget)
        if rest is None:
            if server is not None:
                await server.stop(grace=0)
            return None
    return server, rest


async def _load_then_watch(
    config: ConfigService,
    watcher: ConfigWatcher,
    worker: bool,
    single: ServableRegistry | None,
    stop: asyncio.Event,
) -> bool:
    """The first load, then the file poller; False when the server must stop instead. A
    ``--grpc_workers`` process also loads a config edited while it started (the other
    processes were told to reload before it listened). ``single``: the registry of a server
    started without a config file (``--model_path``), which stops if its servable failed."""
    await config.load_initial()
    if single is not None and not _serves_anything(single):
        # OVMS's model manager fails to start in single-model mode when the model does not
        # load, and the server exits (servablemanagermodule.cpp). Nothing awaited since the
        # load: no client has seen the server ready.
        single.initial_load_done = False
        log.error("Couldn't start model manager: %s", _not_served(single))
        stop.set()
        return False
    if worker:
        await config.catch_up()
    watcher.start()
    return True


def _serves_anything(registry: ServableRegistry) -> bool:
    return any(
        state == VersionState.AVAILABLE.name
        for versions in statuses(registry).values()
        for _, state, _ in versions
    )


def _not_served(registry: ServableRegistry) -> str:
    names = ", ".join(sorted(statuses(registry))) or "the model"
    return f"{names} did not load (the error above says why); nothing to serve, stopping"


async def _loaded_or_stopped(loading: asyncio.Task, stop: asyncio.Event) -> None:
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait((loading, stopping), return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()


async def serve(
    options: ServerOptions,
    servables: Servables,
    role: WorkerRole | None = None,
    metrics_settings: MetricsSettings | None = None,
    config_md5: str | None = None,
) -> int:
    """Serve until SIGINT/SIGTERM; the exit code. ``role`` is set in a ``--grpc_workers``
    process (ovmsx/workers.py): the port is shared, and only the first worker listens before
    its models are loaded. ``metrics_settings``: None = metrics off (each process of
    ``--grpc_workers`` keeps its own). ``config_md5``: of the config file ``servables`` were
    read from (reloads compare with it)."""
    _core.tune_allocator(MMAP_THRESHOLD, TRIM_THRESHOLD)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    set_cpu_defaults(options.grpc_workers if role is not None else 1)

    dispatcher = InferenceDispatcher(loop)
    drain_seconds = _drain_seconds()  # read at start: a bad value is reported now, not at stop
    register_genai_calculators()  # before any graph loads
    registry = ServableRegistry(dispatcher, options.cache_dir)
    metrics = None if metrics_settings is None else ServingMetrics(metrics_settings)
    registry.metrics = metrics
    observer = RequestObserver(registry, metrics)
    service = KServeService(registry, observer)
    health = HealthService(registry)
    config = ConfigService.for_options(options, registry, servables, config_md5, role)
    watcher = ConfigWatcher(config.poll, options.file_system_poll_wait_seconds)
    loop.add_signal_handler(signal.SIGHUP, config.reload_on_signal)
    rest_context = RestContext(registry, service, metrics, config_api=config, observer=observer)
    frontends: Frontends | None = None
    loading: asyncio.Task | None = None
    code = 0
    try:
        if role is None or role.binds_before_loading:
            frontends = await _start_frontends(
                options, service, health, rest_context, reuse_port=role is not None
            )
            if frontends is None:
                return 1
        if role is not None:
            await role.first_worker_loaded(stop)
        if not stop.is_set():
            # ServerLive answers at once; ServerReady turns true when the initial load is done.
            single = registry if options.config_path is None else None
            loading = asyncio.create_task(
                _load_then_watch(config, watcher, role is not None, single, stop)
            )
            loading.add_done_callback(_report_failure)
        if role is not None and loading is not None:
            await _loaded_or_stopped(loading, stop)
            if frontends is None and not stop.is_set():
                frontends = await _start_frontends(
                    options, service, health, rest_context, reuse_port=True
                )
                if frontends is None:
                    return 1
            if not stop.is_set():
                role.report_ready()
        await stop.wait()
        if _failed_to_start(loading):
            code = 1
        else:
            log.info("stopping: draining in-flight requests")
    finally:
        health.shut_down()  # gRPC health watchers hear NOT_SERVING before the drain starts
        if loading is not None:
            loading.cancel()
        await watcher.stop()
        await config.close()
        if not await _shut_down(frontends, registry, dispatcher, drain_seconds):
            code = 1
        if metrics is not None:
            metrics.close()
    log.info("stopped")
    return code


def _failed_to_start(loading: asyncio.Task | None) -> bool:
    return (
        loading is not None
        and loading.done()
        and not loading.cancelled()
        and loading.exception() is None
        and loading.result() is False
    )


async def _shut_down(
    frontends: Frontends | None,
    registry: ServableRegistry,
    dispatcher: InferenceDispatcher,
    drain_seconds: float,
) -> bool:
    """Drain and stop the servers (gRPC and REST together), retire every servable, stop
    watching completions; each step runs even if one before it failed. Whatever path leads
    here, the threads ovmsx started (gRPC polling, graph workers) end before the interpreter
    does: CPython ends a thread that asks for the GIL while it finalizes, unwinding its C++
    frames (pybind11 calls and their Python references) without the GIL."""
    steps = [registry.unload]
    if frontends is not None:
        draining = [f.stop(grace=drain_seconds) for f in frontends if f is not None]
        steps.insert(0, lambda: _all(draining))
    ok = True
    for step in steps:
        try:
            await step()
        except Exception:
            log.exception("stopping failed")
            ok = False
    dispatcher.close()
    return ok


async def _all(steps: list) -> None:
    """Await every step together; the first failure is raised once all have ended."""
    for outcome in await asyncio.gather(*steps, return_exceptions=True):
        if isinstance(outcome, BaseException):
            raise outcome
