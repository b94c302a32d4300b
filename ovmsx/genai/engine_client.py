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
from ovmsx.genai.engine_messages import EngineInfo, EngineRequest
from ovmsx.genai.llm_options import EngineSettings
from ovmsx.genai.wire import FrameReader, pack

log = logging.getLogger("ovmsx.llm_calculator")

# How long an engine with requests may stay silent before it counts as wedged. One step of a
# large model on a long prompt takes seconds, never this long.
DEFAULT_WEDGE_SECONDS = float(os.environ.get("OVMSX_ENGINE_WEDGE_SECONDS", "120"))
_RESTART_PAUSES = (0.5, 1, 2, 5, 10, 30)


class EngineUnavailable(Exception):
    """The engine cannot take requests now (starting again, or stopped)."""


class EngineFailed(Exception):
    """A request's engine failed while the request was in it."""


class Generation:
    """One request's events, in order: ``("text", (index, delta, tokens))`` while streaming,
    then ``("done", result)``; an engine failure raises ``EngineFailed`` from the iteration."""

    __slots__ = ("_engine", "_queue", "finished", "id")

    def __init__(self, engine: EngineClient, request_id: int) -> None:
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


class EngineClient:
    def __init__(
        self,
        name: str,
        settings: EngineSettings,
        loop: asyncio.AbstractEventLoop,
        wedge_seconds: float = DEFAULT_WEDGE_SECONDS,
    ) -> None:
        self.name = name
        self.settings = settings
        self.wedge_seconds = wedge_seconds
        self.info: EngineInfo | None = None
        self.restarts = 0
        self._loop = loop
        self._process: subprocess.Popen | None = None
        self._transport: asyncio.Transport | None = None
        self._requests: dict[int, Generation] = {}
        self._ids = itertools.count(1)
        self._last_heard = time.monotonic()
        self._closing = False
        self._watchdog: asyncio.TimerHandle | None = None
        self.stats: dict = {}

    # -- lifetime --------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self._transport is not None and not self._closing

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running_requests(self) -> int:
        return len(self._requests)

    def start(self) -> EngineInfo:
        """Start the engine and wait until its pipeline is built (blocking: call from a worker
        thread). Raises ``RuntimeError`` with the engine's reason when it cannot start."""
        sock, info = self._spawn()
        asyncio.run_coroutine_threadsafe(self._attach(sock), self._loop).result()
        return info

    def close(self) -> None:
        """Stop the engine (blocking: call from a worker thread). Requests still in it end
        with an error."""
        self._closing = True
        asyncio.run_coroutine_threadsafe(self._detach(), self._loop).result()
        process = self._process
        if process is not None:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _spawn(self) -> tuple[socket.socket, EngineInfo]:
        ours, theirs = socket.socketpair()
        try:
            command = python_command("ovmsx.genai.engine_process", "main", str(theirs.fileno()))
            process = subprocess.Popen(
                command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._process = process
        ours.sendall(pack(self.settings))
        reader = FrameReader()
        while True:
            data = ours.recv(1 << 16)
            if not data:
                code = process.wait()
                ours.close()
                raise RuntimeError(f"the LLM engine exited with code {code} while loading")
            for message in reader.feed(data):
                if message[0] == "ready":
                    self.info = message[1]
                    log.info(
                        "LLM engine of %s (%s) started (pid %d) in %.2f s",
                        self.name,
                        self.settings.models_path,
                        process.pid,
                        self.info.load_seconds,
                    )
                    return ours, self.info
                if message[0] == "failed":
                    process.wait()
                    ours.close()
                    raise RuntimeError(message[1])

    async def _attach(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._last_heard = time.monotonic()
        transport, _ = await self._loop.connect_accepted_socket(lambda: _EngineProtocol(self), sock)
        self._transport = transport
        self._arm_watchdog()

    async def _detach(self) -> None:
        transport, self._transport = self._transport, None
        if self._watchdog is not None:
            self._watchdog.cancel()
        if transport is not None:
            transport.write(pack(("close",)))
            transport.close()
        self._fail_all("the LLM servable is being unloaded")

    # -- requests --------------------------------------------------------------------------

    def submit(self, request: EngineRequest) -> Generation:
        """Send ``request`` to the engine (on the event loop); ``request.id`` is assigned."""
        transport = self._transport
        if transport is None or self._closing:
            raise EngineUnavailable(f"the LLM engine of {self.name} is not running")
        request.id = next(self._ids)
        generation = Generation(self, request.id)
        if not self._requests:
            self._last_heard = time.monotonic()  # silence counts from now
        self._requests[request.id] = generation
        transport.write(pack(("add", request)))
        return generation

    def tokenize(self, request) -> Generation:
        """Send a tokenize request (tokenize_request.py); its one event is ``done``/``error``."""
        transport = self._transport
        if transport is None or self._closing:
            raise EngineUnavailable(f"the LLM engine of {self.name} is not running")
        request_id = next(self._ids)
        generation = Generation(self, request_id)
        self._requests[request_id] = generation
        transport.write(pack(("tokenize", request_id, request)))
        return generation

    def stop(self, request_id: int) -> None:
        if self._requests.pop(request_id, None) is not None and self._transport is not None:
            self._transport.write(pack(("stop", request_id)))

    # -- from the engine -------------------------------------------------------------------

    def received(self, messages: list) -> None:
        self._last_heard = time.monotonic()
        requests = self._requests
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
                self.stats = message[1]
            elif message[0] == "fatal":
                log.error("LLM engine of %s: %s", self.name, message[1])
                self._fail_all(f"the LLM engine failed: {message[1]}")

    def lost(self) -> None:
        """The engine's socket closed: it exited (or was killed)."""
        self._transport = None
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self._closing:
            return
        process = self._process
        code = process.poll() if process is not None else None
        if process is not None and code is None:
            process.kill()
            code = process.wait()
        log.error("LLM engine of %s stopped (exit code %s); restarting it", self.name, code)
        self._fail_all(f"the LLM engine of {self.name} stopped (exit code {code})")
        self._loop.create_task(self._restart())

    def _fail_all(self, reason: str) -> None:
        requests, self._requests = self._requests, {}
        for generation in requests.values():
            generation.deliver("failed", reason)

    async def _restart(self) -> None:
        for attempt in itertools.count():
            if self._closing:
                return
            await asyncio.sleep(_RESTART_PAUSES[min(attempt, len(_RESTART_PAUSES) - 1)])
            try:
                sock, _ = await self._loop.run_in_executor(None, self._spawn)
            except Exception as error:
                log.error("LLM engine of %s failed to start again: %s", self.name, error)
                continue
            if self._closing:
                sock.close()
                return
            await self._attach(sock)
            self.restarts += 1
            return

    def _arm_watchdog(self) -> None:
        self._watchdog = self._loop.call_later(min(1.0, self.wedge_seconds / 2), self._check_wedged)

    def _check_wedged(self) -> None:
        if self._transport is None:
            return
        silent = time.monotonic() - self._last_heard
        if self._requests and silent > self.wedge_seconds:
            log.error(
                "LLM engine of %s sent nothing for %.0f s with %d requests in it: killing it",
                self.name,
                silent,
                len(self._requests),
            )
            if self._process is not None:
                self._process.kill()
            return  # the socket closes; lost() restarts
        self._arm_watchdog()


class _EngineProtocol(asyncio.Protocol):
    def __init__(self, engine: EngineClient) -> None:
        self._engine = engine
        self._reader = FrameReader()

    def data_received(self, data: bytes) -> None:
        messages = self._reader.feed(data)
        if messages:
            self._engine.received(messages)

    def connection_lost(self, exc: Exception | None) -> None:
        self._engine.lost()
