"""``--grpc_workers N`` (N > 1): N serving processes sharing one port, and the supervisor that
runs them.

Each worker is ovmsx itself, started afresh with the user's flags (a fork would copy OpenVINO's
and gRPC's threads in an unusable state), serving the whole config on the port with
``SO_REUSEPORT``: the kernel hands each new connection to one of them. The supervisor:

- checks that the port is free before anything starts (SO_REUSEPORT would otherwise let the
  workers share it with another server of the same user);
- points every worker at one OpenVINO model cache (``--cache_dir``, or a folder of its own
  removed at exit) and starts all of them at once, but only worker 0 loads at once: the others
  start Python meanwhile and load once it has, importing its compiled models from the cache
  instead of compiling them again (and all at once);
- forwards SIGTERM and SIGINT to every worker, waits for all of them to drain and exit, and
  exits with their status;
- relays SIGHUP to every worker, each of which then reloads its config (a worker whose
  ``POST /v1/config/reload`` was called sends it, so that every worker reloads);
- when a worker exits unasked, logs it, stops the others and exits with that worker's code
  (no restart: a crash is a bug to see, and an orchestrator restarts the whole server).

Worker 0 listens at once, as a single server does (ServerLive answers, ServerReady turns true
when its models are loaded); the others listen only once they are loaded, so no connection ever
reaches a worker that is still loading. docs/serving.md, "Several serving processes", has the
whole story and the measurements.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from types import FrameType

from ovmsx.child_python import python_command
from ovmsx.config.cli_options import ServerOptions
from ovmsx.worker_role import WorkerRole

log = logging.getLogger("ovmsx.workers")

EX_FAILURE = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
POLL_SECONDS = 0.2


def port_in_use(addresses: Sequence[str], port: int) -> str | None:
    """The first ``address:port`` where something already listens, or ``None``.

    The probe sets SO_REUSEADDR (as gRPC does, so connections of a previous run in TIME_WAIT
    do not count) but not SO_REUSEPORT, so any listener on the port makes bind() fail.
    """
    for address in addresses:
        try:
            found = socket.getaddrinfo(
                address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )
        except socket.gaierror:
            continue  # gRPC reports an address it cannot resolve itself
        for family, kind, proto, _, where in found:
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    probe.bind(where)
                except OSError as error:
                    if error.errno == errno.EADDRINUSE:
                        return f"{address}:{port}"
    return None


class Supervisor:
    """Starts the workers, relays stop signals to them and waits for them."""

    def __init__(self, options: ServerOptions, argv: Sequence[str]) -> None:
        self._count = options.grpc_workers
        served = [f"gRPC port {options.port}"] if options.port else []
        served += [f"REST port {options.rest_port}"] if options.rest_port else []
        self._served = ", ".join(served)
        self._command = python_command("ovmsx.cli", "main", *argv)
        self._own_cache: str | None = None
        if options.cache_dir is None:
            self._own_cache = tempfile.mkdtemp(prefix="ovmsx-model-cache-")
            self._command += ["--cache_dir", self._own_cache]
        self._ready_read, self._ready_write = os.pipe()
        os.set_blocking(self._ready_read, False)
        # Closed once worker 0 has loaded: the later workers wait for its end to close.
        self._go_read, self._go_write = os.pipe()
        self._workers: list[subprocess.Popen] = []
        self._ready: set[int] = set()
        self._stopping = False
        self._failed: tuple[int, int] | None = None  # (index, exit code) of the first failure

    def run(self) -> int:
        previous = {sig: signal.signal(sig, self._on_signal) for sig in STOP_SIGNALS}
        # Workers are born ignoring SIGHUP (an ignored signal stays ignored across exec) until
        # their event loop handles it: a reload relayed while one starts must not kill it.
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            for index in range(self._count):
                if not self._stopping:  # a stop signal may come while they start
                    self._start(index)
            signal.signal(signal.SIGHUP, self._on_reload)
            # The workers hold their copies; with ours closed, each pipe ends with them.
            self._close("_ready_write")
            self._close("_go_read")
            while self._alive():
                self._wait_a_little()
                if 0 in self._ready:
                    self._close("_go_write")  # the later workers load now
                self._check_exits()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for end in ("_ready_read", "_ready_write", "_go_read", "_go_write"):
                self._close(end)
            if self._own_cache is not None:
                shutil.rmtree(self._own_cache, ignore_errors=True)
        return self._exit_code()

    def _start(self, index: int) -> None:
        go = -1 if index == 0 else self._go_read
        role = WorkerRole(index, self._ready_write, go, os.getpid())
        fds = (role.ready_fd,) if go < 0 else (role.ready_fd, go)
        worker = subprocess.Popen(
            self._command, env={**os.environ, **role.to_environment()}, pass_fds=fds
        )
        self._workers.append(worker)
        log.info("worker %d started (pid %d)", index, worker.pid)

    def _close(self, end: str) -> None:
        """Close one of the pipe ends held in attribute ``end``, once."""
        fd = getattr(self, end)
        if fd >= 0:
            os.close(fd)
            setattr(self, end, -1)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if not self._stopping:
            log.info("%s: stopping %d worker(s)", signal.Signals(signum).name, len(self._workers))
        self._stopping = True
        self._signal_all(signum)

    def _on_reload(self, signum: int, frame: FrameType | None) -> None:
        # From a worker whose config API was asked to reload, or from an operator.
        if not self._stopping:
            log.info("SIGHUP: every worker reloads its configuration")
            self._signal_all(signal.SIGHUP)

    def _signal_all(self, signum: int) -> None:
        for worker in self._workers:
            if worker.poll() is None:
                worker.send_signal(signum)

    def _alive(self) -> bool:
        return any(worker.poll() is None for worker in self._workers)

    def _wait_a_little(self) -> None:
        """Until a worker reports ready or POLL_SECONDS pass. (A stop signal is relayed by its
        handler at once, wherever this loop is.)"""
        if self._ready_read < 0:
            time.sleep(POLL_SECONDS)
            return
        readable, _, _ = select.select([self._ready_read], [], [], POLL_SECONDS)
        if not readable:
            return
        try:
            data = os.read(self._ready_read, 4096)
        except BlockingIOError:
            return
        if not data:  # every worker has reported or exited: nothing more will come
            self._close("_ready_read")
            return
        for line in data.decode().split():
            self._ready.add(int(line))
            log.info("worker %s ready", line)
            if len(self._ready) == self._count:
                log.info("all %d workers serving (%s)", self._count, self._served)

    def _check_exits(self) -> None:
        for index, worker in enumerate(self._workers):
            code = worker.poll()
            if code is None or self._stopping or self._failed is not None:
                continue
            self._failed = (index, code)
            log.error(
                "worker %d (pid %d) exited with %s; stopping the others",
                index,
                worker.pid,
                _describe(code),
            )
            self._stopping = True
            self._signal_all(signal.SIGTERM)

    def _exit_code(self) -> int:
        if self._failed is not None:
            code = _status(self._failed[1])
            return code if code != 0 else EX_FAILURE
        for worker in self._workers:
            code = worker.returncode
            # A worker killed by the stop signal itself had not installed its handlers yet,
            # so it was not serving: nothing was cut short.
            if code is not None and -code in STOP_SIGNALS:
                continue
            if code:
                return _status(code)
        return 0


def _status(code: int) -> int:
    """A child's return code as a shell reports it (a signal N is 128 + N)."""
    return 128 - code if code < 0 else code


def _describe(code: int) -> str:
    if code >= 0:
        return f"code {code}"
    try:
        return f"signal {signal.Signals(-code).name}"
    except ValueError:  # a real-time signal has no name
        return f"signal {-code}"


def supervise(options: ServerOptions, argv: Sequence[str]) -> int:
    """Run ``options.grpc_workers`` serving processes until they stop; their exit status."""
    # Each port in use is refused here: with SO_REUSEPORT the workers would bind beside another
    # program's listener and share its connections.
    taken = port_in_use(options.grpc_bind_addresses, options.port) if options.port else None
    if taken is None and options.rest_port:
        taken = port_in_use([options.rest_bind_address], options.rest_port)
    if taken is not None:
        log.error(
            "Failed to bind to address %s: the port is in use (the --grpc_workers processes "
            "share a port only among themselves)",
            taken,
        )
        return EX_FAILURE
    return Supervisor(options, argv).run()
