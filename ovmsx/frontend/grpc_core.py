"""A gRPC server polled straight from grpc's C-core completion queue, with no grpc.aio in between.

Why: grpc.aio hands every completion from grpc's poller thread to the event loop and runs each
call as an asyncio task, which costs more than a quick model's whole inference. Measured here
with one perf_analyzer connection, the same KServe echo answered 2,600 / 4,600 requests/s
(concurrency 1 / 4) on grpc.aio and 4,850 / 6,500 when one thread polled the completion queue
and answered on the spot (docs/performance.md, "The request path").

How a call runs:

- A thread polls the completion queue. A unary call's message is handed, on that thread, to
  its method's ``unary`` function, which either answers at once (bytes: a quick model or graph,
  no thread hop at all) or returns a ``Deferred``, the rest of the work as a coroutine function,
  which then runs on the event loop (slow models, pipelines, metadata).
- Streams run on the event loop: every receive and send is a C-core operation whose completion
  the polling thread forwards to the loop.
- A call the client cancels, or whose deadline passes, cancels its task on the loop.
- Every request message counts against ``budget`` (memory_budget.py, ``--grpc_memory_quota``)
  until it is answered; one that does not fit ends its call with RESOURCE_EXHAUSTED at once.

This is grpcio's Cython layer (``grpc._cython.cygrpc``), on which grpcio's own servers are built;
it is not grpcio's public API, so pyproject.toml bounds grpcio to the releases tested here, and
the serving tests drive every path of this module with real clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from functools import partial

from grpc._cython import cygrpc

from ovmsx import _core
from ovmsx.frontend.grpc_methods import (
    CALL_CONTEXT,
    CANCELLED,
    LARGE_MESSAGE,
    OK,
    RESOURCE_EXHAUSTED,
    UNIMPLEMENTED,
    ClientGone,
    CountedMessages,
    Deferred,
    Method,
    StreamHandler,
    UnaryHandler,
    status_of,
)
from ovmsx.frontend.memory_budget import MemoryBudget

log = logging.getLogger("ovmsx.frontend")

# How long after the last call that carried a large message free memory is given back to the
# kernel (each time when no call runs then): the message's buffers are all freed by then.
RELEASE_DELAYS_S = (0.05, 1.0)

# Calls the C core may hand over before the polling thread asks for more: enough that a burst
# of new calls never waits for the thread to re-arm one at a time.
PENDING_CALLS = 16
# How long stopping waits for cancelled calls to finish their last batch; each should take
# moments (a cancelled call's batches complete at once, its task is cancelled).
CANCELLED_CALLS_SECONDS = 30.0
_NO_FLAGS = 0
_NEW_CALL = object()
_SHUTDOWN = object()


class CoreServer:
    """Serves ``methods`` (``"/package.Service/Method"`` -> Method) on the ports added."""

    def __init__(
        self,
        methods: Mapping[str, Method],
        options: Iterable[tuple[str, int | str]],
        loop: asyncio.AbstractEventLoop,
        budget: MemoryBudget | None = None,
    ) -> None:
        self._methods = {path.encode(): method for path, method in methods.items()}
        # Request bytes in flight (the server shares one budget with REST).
        self.budget = budget if budget is not None else MemoryBudget()
        self._loop = loop
        self._queue = cygrpc.CompletionQueue()
        self._server = cygrpc.Server(tuple(options), False)
        self._server.register_completion_queue(self._queue)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._calls = 0  # calls begun and not yet finished, under _lock
        self._large_received = False  # since memory was last given back, under _lock
        self._stopping = False
        self._drained = asyncio.Event()
        self._shut_down = asyncio.Event()

    def add_insecure_port(self, address: str) -> int:
        """Binds ``host:port``; returns the port (chosen by the OS for port 0)."""
        port = self._server.add_http2_port(address.encode())
        if port == 0:
            raise RuntimeError(f"Failed to bind to address {address}")
        return port

    async def start(self) -> None:
        """Starts serving on one polling thread. (Two threads polling the same queue measured
        slower for add_one at concurrency 1 and 4: they contend for the GIL.)"""
        self._server.start()
        for _ in range(PENDING_CALLS):
            self._server.request_call(self._queue, self._queue, _NEW_CALL)
        self._thread = threading.Thread(target=self._poll, name="ovmsx-grpc", daemon=True)
        self._thread.start()

    async def stop(self, grace: float | None) -> None:
        """Stop taking calls, let the calls in flight finish for up to ``grace`` seconds, cancel
        what is left, and wait for the polling thread to end."""
        if self._thread is None:
            return
        self._stopping = True
        self._server.shutdown(self._queue, _SHUTDOWN)
        if not await self._calls_finished(grace):
            log.warning("cancelling calls still running after %s s", grace)
        self._server.cancel_all_calls()
        await self._shut_down.wait()
        # A call accepted just before the shutdown may still be finishing its last batch (its
        # handler was running, or its reply was on its way to the loop). The queue must outlive
        # every batch started on it: gRPC aborts the process otherwise.
        if not await self._calls_finished(CANCELLED_CALLS_SECONDS):
            log.error("calls unfinished %s s after cancelling them", CANCELLED_CALLS_SECONDS)
        self._queue.shutdown()
        await asyncio.to_thread(self._thread.join)
        self._server.destroy()
        self._thread = None

    async def _calls_finished(self, timeout: float | None) -> bool:
        """Waits until no call is in flight; False if ``timeout`` passed first."""
        while True:
            with self._lock:
                if self._calls == 0:
                    return True
            self._drained.clear()  # set again (on this loop) by the call that ends last
            try:
                await asyncio.wait_for(self._drained.wait(), timeout)
            except asyncio.TimeoutError:
                return False

    # -- the polling thread -------------------------------------------------------------------

    def _poll(self) -> None:
        queue = self._queue
        while True:
            event = queue.poll()
            if event.completion_type == cygrpc.CompletionType.queue_shutdown:
                return
            tag = event.tag
            try:
                if tag is _NEW_CALL:
                    self._new_call(event)
                elif tag is _SHUTDOWN:
                    self._loop.call_soon_threadsafe(self._shut_down.set)
                else:
                    tag(event)
            except Exception:  # a bug in this module: keep serving everything else
                log.exception("gRPC completion failed")

    def _new_call(self, event) -> None:
        if not event.success:  # the server is shutting down
            return
        if not self._stopping:
            self._server.request_call(self._queue, self._queue, _NEW_CALL)
        call = event.call
        with self._lock:
            self._calls += 1
        method = self._methods.get(event.call_details.method)
        if method is None:
            self._finish(call, UNIMPLEMENTED, "Method not found!", closing=True)
        elif method.unary is not None:
            receive = (cygrpc.ReceiveMessageOperation(_NO_FLAGS),)
            call.start_server_batch(receive, partial(self._received, call, method.unary))
        else:
            self._loop.call_soon_threadsafe(self._start_stream, call, method.stream)

    def _received(self, call, handler: UnaryHandler, event) -> None:
        message = event.batch_operations[0].message() if event.success else None
        if message is None:  # cancelled before its message arrived, or no message at all
            self._finish(call, CANCELLED, "no request message", closing=True)
            return
        size = len(message)
        if size >= LARGE_MESSAGE:
            self.note_large_message()
        budget = self.budget  # this thread's counter, updated inline: the hot path
        if budget.poller + budget.loop + size > budget.quota:
            self._finish(call, RESOURCE_EXHAUSTED, budget.refusal(size), closing=True)
            return
        budget.poller += size
        try:
            answer = handler(message)
        except Exception as error:
            budget.poller -= size
            self._finish(call, *status_of(error, handler), closing=True)
            return
        if type(answer) is bytes:
            budget.poller -= size
            self._reply(call, answer, closing=True)
        else:  # the deferred work holds the message until it ends, on the loop
            self._loop.call_soon_threadsafe(self._start_deferred, call, answer, size)

    def _cancel_if_cancelled(self, task: asyncio.Task, event) -> None:
        if not event.success or event.batch_operations[0].cancelled():
            self._loop.call_soon_threadsafe(task.cancel)

    def note_large_message(self) -> None:
        with self._lock:
            self._large_received = True

    def _call_done(self, _event=None) -> None:
        with self._lock:
            self._calls -= 1
            idle = self._calls == 0
            release = idle and self._large_received
        if release:
            # Not now: this completion can come before the thread that read the message has
            # freed gRPC's copy of it (its batch event is still alive there), and memory freed
            # after a trim stays in the arena. A moment later, if still idle, it is all free;
            # a second look a while after covers threads that were starved of CPU meanwhile.
            self._loop.call_soon_threadsafe(self._release_later)
        if idle and self._stopping:
            self._loop.call_soon_threadsafe(self._drained.set)

    def _release_later(self) -> None:
        for delay in RELEASE_DELAYS_S:
            self._loop.call_later(delay, self._release_if_idle, delay == RELEASE_DELAYS_S[-1])

    def _release_if_idle(self, last: bool) -> None:
        """Give free memory back to the kernel after large messages, if no call runs (on the
        loop; the trim itself runs on a worker thread: it can take milliseconds)."""
        with self._lock:
            release = self._calls == 0 and self._large_received and not self._stopping
            if release and last:
                self._large_received = False
        if not release:
            return
        # RuntimeError: the loop's executor is shut down, so the server is stopping anyway.
        with contextlib.suppress(RuntimeError):
            self._loop.run_in_executor(None, _core.release_free_memory)

    # -- answering ----------------------------------------------------------------------------

    def _reply(self, call, message: bytes, closing: bool) -> None:
        operations = [
            cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS),
            cygrpc.SendMessageOperation(message, _NO_FLAGS),
            cygrpc.SendStatusFromServerOperation(None, OK, b"", _NO_FLAGS),
        ]
        if closing:
            operations.append(cygrpc.ReceiveCloseOnServerOperation(_NO_FLAGS))
        call.start_server_batch(operations, self._call_done)

    def _finish(
        self, call, code: int, details: str, closing: bool, metadata_sent: bool = False
    ) -> None:
        operations = [
            cygrpc.SendStatusFromServerOperation(
                None, code, details.encode("utf-8", "replace"), _NO_FLAGS
            )
        ]
        if not metadata_sent:
            operations.append(cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS))
        if closing:
            operations.append(cygrpc.ReceiveCloseOnServerOperation(_NO_FLAGS))
        call.start_server_batch(operations, self._call_done)

    # -- on the event loop --------------------------------------------------------------------

    def _watch(self, call, coroutine) -> asyncio.Task:
        task = self._loop.create_task(coroutine)
        close = (cygrpc.ReceiveCloseOnServerOperation(_NO_FLAGS),)
        call.start_server_batch(close, partial(self._cancel_if_cancelled, task))
        return task

    def _start_deferred(self, call, deferred: Deferred, size: int) -> None:
        task = self._watch(call, self._run_deferred(call, deferred))
        # A done callback, not a ``finally``: it runs even if the task is cancelled before
        # its first step. By then the task's frame, which held the message, is gone.
        task.add_done_callback(partial(_give_back_on_loop, self.budget, size))

    async def _run_deferred(self, call, deferred: Deferred) -> None:
        try:
            answer = await deferred(CALL_CONTEXT)
        except (Exception, asyncio.CancelledError) as error:
            self._finish(call, *status_of(error, deferred), closing=False)
        else:
            self._reply(call, answer, closing=False)

    def _start_stream(self, call, handler: StreamHandler) -> None:
        stream = _Stream(call, self._loop, self.note_large_message, self.budget)
        self._watch(call, stream.run(handler, self._finish))


def _give_back_on_loop(budget: MemoryBudget, size: int, _task: asyncio.Task) -> None:
    budget.give_back_on_loop(size)


class _Stream:
    """One streaming call on the loop: receives as an async iterator (``CountedMessages``,
    which counts each message against the budget), sends one at a time."""

    __slots__ = ("_call", "_counted", "_loop", "_metadata_sent", "_receiving")

    def __init__(
        self,
        call,
        loop: asyncio.AbstractEventLoop,
        note_large: Callable[[], None],
        budget: MemoryBudget,
    ):
        self._call = call
        self._loop = loop
        self._metadata_sent = False
        self._counted = CountedMessages(budget, note_large)
        self._receiving = (cygrpc.ReceiveMessageOperation(_NO_FLAGS),)

    async def run(self, handler: StreamHandler, finish) -> None:
        code, details = OK, ""
        messages = self._counted.messages(self._received)
        try:
            async for response in handler(messages, CALL_CONTEXT):
                await self._send(response)
        except (Exception, asyncio.CancelledError) as error:
            code, details = status_of(error, handler)
        finally:
            # Gives back the budget of a message still held; a handler that reads in a task
            # of its own may still be inside the iterator, which then ends with that task.
            with contextlib.suppress(RuntimeError):
                await messages.aclose()
        if self._counted.refused is not None:
            code, details = self._counted.refused
        finish(self._call, code, details, closing=False, metadata_sent=self._metadata_sent)

    async def _received(self) -> bytes | None:
        """The next message; None when the client has sent its last (or gone)."""
        future = self._loop.create_future()
        self._call.start_server_batch(self._receiving, partial(_resolve, self._loop, future, True))
        return await future

    async def _send(self, message: bytes) -> None:
        operations = [cygrpc.SendMessageOperation(message, _NO_FLAGS)]
        if not self._metadata_sent:
            operations.insert(0, cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS))
            self._metadata_sent = True
        future = self._loop.create_future()
        self._call.start_server_batch(operations, partial(_resolve, self._loop, future, False))
        if not await future:
            raise ClientGone


def _resolve(loop: asyncio.AbstractEventLoop, future: asyncio.Future, receiving: bool, event):
    """From the polling thread: a receive's message (None at the end), or a send's success."""
    if receiving:
        value = event.batch_operations[0].message() if event.success else None
    else:
        value = event.success
    loop.call_soon_threadsafe(_settle, future, value)


def _settle(future: asyncio.Future, value) -> None:
    if not future.done():
        future.set_result(value)
