"""Bridges C++ inference completions to asyncio futures.

OpenVINO finishes inferences on its own threads. The C++ pool pushes each result into a
``CompletionQueue`` and signals its eventfd; this dispatcher watches that fd with
``loop.add_reader`` and resolves futures on the loop's thread, so no OpenVINO thread ever
waits for the GIL and one wake-up delivers every result that finished meanwhile.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence

from ovmsx import _core
from ovmsx.status import StatusCode, status_error


class InferenceDispatcher:
    """One per event loop: hands out tokens, resolves their futures when results arrive."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.queue = _core.CompletionQueue()
        self._waiting: dict[int, asyncio.Future[list[_core.Tensor]]] = {}
        # What a job submitted with DirectInfer.submit reads and writes (its request and the
        # response OpenVINO fills): kept alive until its completion arrives, even if the
        # caller gave up meanwhile.
        self._in_use: dict[int, tuple[bytes, bytes]] = {}
        self._tokens = itertools.count(1)
        # ModelInfer calls being answered right now, which the frontend counts: on this loop,
        # and on gRPC's polling thread (each count has one writer, so no lock is needed). How
        # busy the server is, for graphs deciding whether to infer on the loop themselves.
        self.requests_on_loop = 0
        self.requests_polled = 0
        loop.add_reader(self.queue.fd, self._deliver)

    def close(self) -> None:
        self._loop.remove_reader(self.queue.fd)

    @property
    def requests(self) -> int:
        return self.requests_on_loop + self.requests_polled

    @property
    def in_flight(self) -> int:
        """Jobs whose completion has not arrived yet (their buffers are still held)."""
        return len(self._waiting)

    def infer(
        self, pool: _core.InferencePool, inputs: Sequence[_core.Tensor]
    ) -> asyncio.Future[list[_core.Tensor]]:
        """Start inference; the future gets the outputs in the model's output order."""
        token = next(self._tokens)
        future: asyncio.Future[list[_core.Tensor]] = self._loop.create_future()
        self._waiting[token] = future
        try:
            pool.submit(token, list(inputs))
        except BaseException:
            del self._waiting[token]
            raise
        return future

    async def respond(self, direct: _core.DirectInfer, message: bytes) -> bytes | None:
        """The serialized response to ``message``, inferred on OpenVINO's thread straight into
        it (``DirectInfer.submit``); None when the request is not a plain one."""
        token = next(self._tokens)
        response = direct.submit(message, token)
        if response is None:
            return None
        # Registered before the loop can run _deliver: nothing completes unseen.
        future: asyncio.Future[list[_core.Tensor]] = self._loop.create_future()
        self._waiting[token] = future
        self._in_use[token] = (message, response)
        await future
        return response

    def _deliver(self) -> None:
        for token, outputs, code, details in self.queue.drain():
            self._in_use.pop(token, None)
            future = self._waiting.pop(token, None)
            if future is None or future.done():  # the caller gave up (cancelled RPC)
                continue
            if code == StatusCode.OK:
                future.set_result(outputs)
            else:
                future.set_exception(status_error(code, details))
