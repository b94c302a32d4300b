"""ovmsx's gRPC methods served on grpc.aio, grpcio's public asyncio server.

The fallback transport (grpc_transport.py says when): it serves the same ``Method`` table as
``grpc_core.CoreServer`` with the same statuses, memory budget and cancellation, but every call
runs on the event loop as an asyncio task, and a unary call's quick part on a thread of its own
(as CoreServer's polling thread runs it). It is slower for quick requests: a KServe echo on
grpc.aio answered 1,647 / 2,178 requests a second (concurrency 1 / 4) where the same echo on
ovmsx's transport answered 2,788 / 3,517 (docs/performance.md, "The gRPC transport"), and the
thread hop costs more. It uses no private part of grpcio, so any release runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from collections.abc import AsyncIterator, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import grpc

from ovmsx import _core
from ovmsx.frontend.grpc_methods import (
    CALL_CONTEXT,
    LARGE_MESSAGE,
    RESOURCE_EXHAUSTED,
    CountedMessages,
    Method,
    StreamHandler,
    UnaryHandler,
    status_of,
)
from ovmsx.frontend.memory_budget import MemoryBudget

RELEASE_DELAY_SECONDS = 0.05
_STATUS = {code.value[0]: code for code in grpc.StatusCode}


class AioServer:
    """Serves ``methods`` (``"/package.Service/Method"`` -> Method) on the ports added; the
    interface of ``grpc_core.CoreServer``."""

    def __init__(
        self,
        methods: Mapping[str, Method],
        options: Iterable[tuple[str, int | str]],
        loop: asyncio.AbstractEventLoop,
        budget: MemoryBudget | None = None,
    ) -> None:
        self._loop = loop
        # One thread, as CoreServer's one polling thread, for the unary handlers' quick part;
        # it has that thread's name, as it has that thread's job.
        self._answering = ThreadPoolExecutor(1, initializer=_name_thread)
        self.budget = budget if budget is not None else MemoryBudget()
        self._calls = 0
        self._large_received = False
        self._server = grpc.aio.server(options=list(options))
        handlers = {path: self._handler(method) for path, method in methods.items()}
        self._server.add_generic_rpc_handlers((_Router(handlers),))

    def add_insecure_port(self, address: str) -> int:
        """Binds ``host:port``; returns the port (chosen by the OS for port 0)."""
        port = self._server.add_insecure_port(address)
        if port == 0:  # older releases return 0 instead of raising
            raise RuntimeError(f"Failed to bind to address {address}")
        return port

    async def start(self) -> None:
        await self._server.start()

    async def stop(self, grace: float | None) -> None:
        """Stop taking calls, let the calls in flight finish for up to ``grace`` seconds,
        then cancel what is left."""
        await self._server.stop(grace)
        # grpc.aio's polling thread ends with the last server object, which the calls it ended
        # may still reach through reference cycles: none may be left running at exit.
        self._server = None
        gc.collect()
        await asyncio.to_thread(self._answering.shutdown)

    # -- calls --------------------------------------------------------------------------------

    def _handler(self, method: Method) -> grpc.RpcMethodHandler:
        # No (de)serializers: handlers take and return the messages' bytes.
        if method.unary is not None:
            unary = method.unary

            async def answer_unary(message: bytes, context: grpc.aio.ServicerContext) -> bytes:
                return await self._unary(unary, message, context)

            return grpc.unary_unary_rpc_method_handler(answer_unary)
        stream = method.stream
        assert stream is not None

        # An async generator function, so that grpc.aio takes what it yields as the answers.
        async def answer_stream(
            messages: AsyncIterator[bytes], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[bytes]:
            async for response in self._stream(stream, messages, context):
                yield response

        return grpc.stream_stream_rpc_method_handler(answer_stream)

    async def _unary(
        self, handler: UnaryHandler, message: bytes, context: grpc.aio.ServicerContext
    ) -> bytes:
        size = len(message)
        if not self.budget.take_on_loop(size):
            return _end_call(context, RESOURCE_EXHAUSTED, self.budget.refusal(size))
        self._begin(size, context)
        try:
            # Off the loop, as CoreServer's polling thread: a handler answering at once may
            # wait for work it hands to the loop (a pipeline or graph run by a session).
            answer = await self._loop.run_in_executor(self._answering, handler, message)
            if type(answer) is not bytes:  # the rest of its work, for the loop
                answer = await answer(CALL_CONTEXT)
            return answer
        except Exception as error:
            code, details = status_of(error, handler)
        finally:
            message = None
            self.budget.give_back_on_loop(size)
        return _end_call(context, code, details)

    async def _stream(
        self,
        handler: StreamHandler,
        messages: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[bytes]:
        counted = CountedMessages(self.budget, self._note_large)
        received = counted.messages(partial(anext, aiter(messages), None))
        failed = None
        self._begin(0, context)
        try:
            async for response in handler(received, CALL_CONTEXT):
                yield response
        except Exception as error:
            failed = status_of(error, handler)
        finally:
            with contextlib.suppress(RuntimeError):  # still being read by a task of its own
                await received.aclose()
        if counted.refused is not None:
            failed = counted.refused
        if failed is not None:
            _end_call(context, *failed)

    def _begin(self, size: int, context: grpc.aio.ServicerContext) -> None:
        """Counts the call in flight until grpc.aio is done with it, by which time it has
        dropped the request's bytes, so that freed memory can go back to the kernel."""
        self._calls += 1
        if size >= LARGE_MESSAGE:
            self._note_large()
        context.add_done_callback(self._end)

    def _note_large(self) -> None:
        self._large_received = True

    def _end(self, _context: object = None) -> None:
        self._calls -= 1
        if self._calls == 0 and self._large_received:
            # gRPC's core frees the call's buffers on its own threads just after this
            # callback: give memory back a moment later, if no call has begun since.
            self._loop.call_later(RELEASE_DELAY_SECONDS, self._release_if_idle)

    def _release_if_idle(self) -> None:
        if self._calls == 0 and self._large_received:
            self._large_received = False
            _core.release_free_memory()


def _end_call(context: grpc.aio.ServicerContext, code: int, details: str) -> bytes:
    """Ends a call with a status other than OK. Not ``context.abort``: the exception it raises
    would keep the frames that hold the request's bytes alive until the garbage collector
    breaks the cycle (ten rejected 100 MiB requests held 1.5 GB for seconds)."""
    context.set_code(_STATUS[code])
    context.set_details(details)
    return b""


def _name_thread() -> None:
    threading.current_thread().name = "ovmsx-grpc"


class _Router(grpc.GenericRpcHandler):
    """Finds a call's handler by its method path; None makes grpc answer UNIMPLEMENTED."""

    def __init__(self, handlers: Mapping[str, grpc.RpcMethodHandler]) -> None:
        self._handlers = dict(handlers)

    def service(self, handler_call_details: grpc.HandlerCallDetails):
        return self._handlers.get(handler_call_details.method)
