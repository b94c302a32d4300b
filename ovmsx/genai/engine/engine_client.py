"""An LLM engine process (engine_process.py) as the server sees it: start it, send it requests,
hand their events to the coroutines waiting for them, and bring it back when it dies or wedges.

The socket pair's server end lives on the event loop; each frame from the engine (everything one
step produced) is read and dispatched there, so no thread sits between the engine and a
streamed response. A request's events wait in its own queue: ``Generation`` is what a handler
iterates, and closing one before it finished (the client left, the handler failed) tells the
engine to stop it, which frees its KV cache at the engine's next step.

An engine that exits, or that holds unfinished requests without sending anything for
``wedge_seconds``, is killed; its requests end with an error, the servable reports not ready,
and a new engine starts (after a pause that grows while starts keep failing). Other servables
never notice: they do not share the process.

An engine past its operator's bounds (engine_limits.py) is replaced without failing anything: a
new engine starts beside it, takes every new request once ready, and the old one is closed when
its last request ends. While that happens two engine processes run.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
import subprocess
import time

from ovmsx.child_python import python_command
from ovmsx.genai.engine.engine_limits import EngineLimits
from ovmsx.genai.engine.engine_messages import EngineInfo, EngineRequest
from ovmsx.genai.engine.engine_settings import EngineSettings
from ovmsx.genai.engine.wire import FrameReader, pack

log = logging.getLogger("ovmsx.llm_calculator")

# How long an engine with requests may stay silent before it counts as wedged. One step of a
# large model on a long prompt takes seconds, never this long.
DEFAULT_WEDGE_SECONDS = float(os.environ.get("OVMSX_ENGINE_WEDGE_SECONDS", "120"))
_RESTART_PAUSES = (0.5, 1, 2, 5, 10, 30)
# An engine is not replaced for its bounds before it has served this long: a bound below what a
# fresh engine needs would otherwise start engines back to back.
REPLACE_MIN_AGE_S = 2.0


class EngineUnavailable(Exception):
    """The engine cannot take requests now (starting again, or stopped)."""


class EngineFailed(Exception):
    """A request's engine failed while the request was in it."""


class Generation:
    """One request's events, in order: ``("text", (index, delta, tokens))`` while streaming,
    then ``("done", result)``; an engine failure raises ``EngineFailed`` from the iteration."""

    __slots__ = ("_engine", "_queue", "finished", "id")

    def __init__(self, engine: _Engine, request_id: int) -> None:
        self._engine = engine
        self._queue: asyncio.Queue = asyncio.Queue()
        self.id = request_id
        self.finished = False

    def __aiter__(self) -> Generation:
        return self

    async def __anext__(self) -> tuple[str, object]:
        if self.finished and self._queue.empty():
            raise StopAsyncIteration
        return self._taken(await self._queue.get())

    def next_ready(self) -> tuple[str, object] | None:
        """The next event if it has arrived already, else None; never waits."""
        if self._queue.empty():
            return None
        return self._taken(self._queue.get_nowait())

    def _taken(self, event: tuple[str, object]) -> tuple[str, object]:
        kind, data = event
        if kind == "failed":
            self.finished = True
            raise EngineFailed(data)
        if kind in ("done", "error"):
            self.finished = True
        return event

    def deliver(self, kind: str, data: object) -> None:
        self._queue.put_nowait((kind, data))

    def close(self) -> None:
        """Stop the generation if it has not finished (idempotent)."""
        if not self.finished:
            self.finished = True
            self._engine.stop(self.id)


class _Engine:
    """One engine process and the requests in it, on the event loop."""

    def __init__(self, client: EngineClient, process: subprocess.Popen, info: EngineInfo) -> None:
        self.client = client
        self.process = process
        self.info = info
        self.transport: asyncio.Transport | None = None
        self.requests: dict[int, Generation] = {}
        self.taken = 0
        """Generations sent to it, for ``--engine_max_requests``."""
        self.started = time.monotonic()
        self.last_heard = self.started
        self.draining = False
        """Replaced: it takes no new request and is closed when its last one ends."""
        self.closing = False
        self.watchdog: asyncio.TimerHandle | None = None

    def send(self, message: object) -> None:
        if self.transport is not None:
            self.transport.write(pack(message))

    def add(self, generation: Generation, message: object) -> None:
        if not self.requests:
            self.last_heard = time.monotonic()  # silence counts from now
        self.requests[generation.id] = generation
        self.send(message)

    def stop(self, request_id: int) -> None:
        if self.requests.pop(request_id, None) is not None:
            self.send(("stop", request_id))
        self.close_if_drained()

    def close_if_drained(self) -> None:
        if self.draining and not self.requests and not self.closing:
            self.shut("replaced")

    def shut(self, reason: str) -> None:
        """Ask the process to exit and fail what is still in it."""
        self.closing = True
        if self.watchdog is not None:
            self.watchdog.cancel()
        transport, self.transport = self.transport, None
        if transport is not None:
            transport.write(pack(("close",)))
            transport.close()
        self.fail_all(reason)

    def fail_all(self, reason: str) -> None:
        requests, self.requests = self.requests, {}
        for generation in requests.values():
            generation.deliver("failed", reason)

    # -- from the process ------------------------------------------------------------------

    def received(self, messages: list) -> None:
        self.last_heard = time.monotonic()
        requests = self.requests
        for message in messages:
            if isinstance(message, list):
                for kind, request_id, data in message:
                    generation = requests.get(request_id)
                    if generation is None:
                        continue  # stopped meanwhile
                    if kind != "text":
                        del requests[request_id]
                    generation.deliver(kind, data)
            elif message[0] == "stats":
                self.client.heard_stats(self, message[1])
            elif message[0] == "fatal":
                log.error("LLM engine of %s: %s", self.client.name, message[1])
                self.fail_all(f"the LLM engine failed: {message[1]}")
        self.close_if_drained()

    def lost(self) -> None:
        """Its socket closed: it exited, was killed, or was closed here."""
        self.transport = None
        if self.watchdog is not None:
            self.watchdog.cancel()
        process = self.process
        code = process.poll()
        if self.closing:
            self.client.forget(self)
            if code is None:
                self.client.reap(process)
            return
        if code is None:
            process.kill()
            code = process.wait()
        self.fail_all(f"the LLM engine of {self.client.name} stopped (exit code {code})")
        self.client.engine_lost(self, code)

    def arm_watchdog(self, period: float) -> None:
        self.watchdog = self.client.loop.call_later(period, self.check_wedged, period)

    def check_wedged(self, period: float) -> None:
        if self.transport is None:
            return
        silent = time.monotonic() - self.last_heard
        if self.requests and silent > self.client.wedge_seconds:
            log.error(
                "LLM engine of %s sent nothing for %.0f s with %d requests in it: killing it",
                self.client.name,
                silent,
                len(self.requests),
            )
            self.process.kill()
            return  # the socket closes; lost() restarts
        self.arm_watchdog(period)


class EngineClient:
    def __init__(
        self,
        name: str,
        settings: EngineSettings,
        loop: asyncio.AbstractEventLoop,
        wedge_seconds: float = DEFAULT_WEDGE_SECONDS,
        limits: EngineLimits | None = None,
    ) -> None:
        self.name = name
        self.settings = settings
        self.loop = loop
        self.wedge_seconds = wedge_seconds
        self.limits = limits if limits is not None else EngineLimits.from_environment()
        self.info: EngineInfo | None = None
        self.restarts = 0
        self.replacements = 0
        self.stats: dict = {}
        self._engine: _Engine | None = None
        """The engine that takes new requests."""
        self._draining: set[_Engine] = set()
        self._ids = itertools.count(1)
        self._closing = False
        self._replacing = False

    # -- lifetime --------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        engine = self._engine
        return engine is not None and engine.transport is not None and not self._closing

    @property
    def pid(self) -> int | None:
        return self._engine.process.pid if self._engine is not None else None

    @property
    def running_requests(self) -> int:
        engines = [*self._draining, *([self._engine] if self._engine else [])]
        return sum(len(engine.requests) for engine in engines)

    def start(self) -> EngineInfo:
        """Start the engine and wait until its pipeline is built (blocking: call from a worker
        thread). Raises ``RuntimeError`` with the engine's reason when it cannot start."""
        started = self._spawn()
        asyncio.run_coroutine_threadsafe(self._attach(*started), self.loop).result()
        return started[2]

    def close(self) -> None:
        """Stop the engines (blocking: call from a worker thread). Requests still in them end
        with an error."""
        self._closing = True
        processes = asyncio.run_coroutine_threadsafe(self._detach(), self.loop).result()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _spawn(self) -> tuple[socket.socket, subprocess.Popen, EngineInfo]:
        ours, theirs = socket.socketpair()
        try:
            command = python_command(
                "ovmsx.genai.engine.engine_process", "main", str(theirs.fileno())
            )
            process = subprocess.Popen(
                command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        try:
            info = _wait_ready(ours, process, self.settings)
        except BaseException:
            ours.close()
            raise
        log.info(
            "LLM engine of %s (%s) started (pid %d) in %.2f s",
            self.name,
            self.settings.models_path,
            process.pid,
            info.load_seconds,
        )
        return ours, process, info

    async def _attach(
        self, sock: socket.socket, process: subprocess.Popen, info: EngineInfo
    ) -> _Engine:
        engine = _Engine(self, process, info)
        sock.setblocking(False)
        transport, _ = await self.loop.connect_accepted_socket(
            lambda: _EngineProtocol(engine), sock
        )
        engine.transport = transport
        engine.arm_watchdog(min(1.0, self.wedge_seconds / 2))
        self.info = info
        self._engine = engine
        return engine

    async def _detach(self) -> list[subprocess.Popen]:
        engines = [*self._draining, *([self._engine] if self._engine else [])]
        self._draining.clear()
        for engine in engines:
            engine.shut("the LLM servable is being unloaded")
        return [engine.process for engine in engines]

    def forget(self, engine: _Engine) -> None:
        """A replaced engine has been closed."""
        self._draining.discard(engine)

    def reap(self, process: subprocess.Popen) -> None:
        """Wait for a closed engine's exit off the loop (it exits within a step)."""
        self.loop.run_in_executor(None, _reaped, process)

    # -- requests --------------------------------------------------------------------------

    def _taking(self) -> _Engine:
        engine = self._engine
        if engine is None or engine.transport is None or self._closing:
            raise EngineUnavailable(f"the LLM engine of {self.name} is not running")
        return engine

    def submit(self, request: EngineRequest) -> Generation:
        """Send ``request`` to the engine (on the event loop); ``request.id`` is assigned."""
        engine = self._taking()
        request.id = next(self._ids)
        generation = Generation(engine, request.id)
        engine.add(generation, ("add", request))
        engine.taken += 1
        self._check_limits(engine)
        return generation

    def tokenize(self, request) -> Generation:
        """Send a tokenize request (tokenize_request.py); its one event is ``done``/``error``."""
        engine = self._taking()
        generation = Generation(engine, next(self._ids))
        engine.add(generation, ("tokenize", generation.id, request))
        return generation

    # -- from the engines ------------------------------------------------------------------

    def heard_stats(self, engine: _Engine, stats: dict) -> None:
        if engine is self._engine:
            self.stats = stats
            self._check_limits(engine)

    def engine_lost(self, engine: _Engine, code: int | None) -> None:
        if engine in self._draining:
            self._draining.discard(engine)
            log.error("replaced LLM engine of %s stopped (exit code %s)", self.name, code)
            return
        if engine is not self._engine or self._closing:
            return
        log.error("LLM engine of %s stopped (exit code %s); restarting it", self.name, code)
        self.loop.create_task(self._restart())

    async def _restart(self) -> None:
        for attempt in itertools.count():
            if self._closing:
                return
            await asyncio.sleep(_RESTART_PAUSES[min(attempt, len(_RESTART_PAUSES) - 1)])
            try:
                started = await self.loop.run_in_executor(None, self._spawn)
            except Exception as error:
                log.error("LLM engine of %s failed to start again: %s", self.name, error)
                continue
            if self._closing:
                _discard(*started)
                return
            await self._attach(*started)
            self.restarts += 1
            return

    # -- replacement -----------------------------------------------------------------------

    def _check_limits(self, engine: _Engine) -> None:
        if self._replacing or self._closing or engine is not self._engine:
            return
        if time.monotonic() - engine.started < REPLACE_MIN_AGE_S:
            return
        reason = self.limits.exceeded(self.stats.get("rss_bytes", 0), engine.taken)
        if reason is None:
            return
        self._replacing = True
        log.info(
            "Replacing the LLM engine of %s (pid %d): %s", self.name, engine.process.pid, reason
        )
        self.loop.create_task(self._replace(engine))

    async def _replace(self, old: _Engine) -> None:
        try:
            started = await self.loop.run_in_executor(None, self._spawn)
        except Exception as error:
            log.error("LLM engine of %s: its replacement failed to start: %s", self.name, error)
            self._replacing = False
            return
        if self._closing or old is not self._engine:  # unloaded, or died meanwhile
            _discard(*started)
            self._replacing = False
            return
        old.draining = True
        self._draining.add(old)
        self.stats = {}
        await self._attach(*started)
        self.replacements += 1
        self._replacing = False
        old.close_if_drained()


def _wait_ready(sock: socket.socket, process: subprocess.Popen, settings: EngineSettings):
    """Send the settings and wait for the engine's ``ready`` (its info) or its reason."""
    sock.sendall(pack(settings))
    reader = FrameReader()
    while True:
        try:
            data = sock.recv(1 << 16)
        except OSError:  # the process died (ConnectionResetError)
            data = b""
        if not data:
            code = process.wait()
            raise RuntimeError(
                f"the LLM engine process exited with code {code} while loading "
                "(its own output is in the server's log)"
            )
        for message in reader.feed(data):
            if message[0] == "ready":
                return message[1]
            if message[0] == "failed":
                process.wait()
                raise RuntimeError(message[1])


def _discard(sock: socket.socket, process: subprocess.Popen, _info: EngineInfo) -> None:
    sock.sendall(pack(("close",)))
    sock.close()
    _reaped(process)


def _reaped(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class _EngineProtocol(asyncio.Protocol):
    def __init__(self, engine: _Engine) -> None:
        self._engine = engine
        self._reader = FrameReader()

    def data_received(self, data: bytes) -> None:
        messages = self._reader.feed(data)
        if messages:
            self._engine.received(messages)

    def connection_lost(self, exc: Exception | None) -> None:
        self._engine.lost()
