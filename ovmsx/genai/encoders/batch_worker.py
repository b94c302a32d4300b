"""One thread that runs an encoder's inferences, batching the requests that wait for it.

Embeddings and rerank requests are small and many; one inference over all the requests that
queued while the previous one ran costs less than one inference each (see docs/performance.md,
"Embeddings"). The thread takes the waiting jobs, oldest first, up to ``max_rows`` rows between
them (a job's rows are ``rows(work)``; one job bigger than that goes alone), and hands the list
to the servable's ``run`` callable, which answers each job's future. The cap keeps a batch as
short as one efficient inference: a request that waited is answered after its own batch, not
after every request that came meanwhile. OpenVINO releases the GIL while it infers, so the
serving loop keeps running meanwhile. A job whose client went away (its future cancelled) is
dropped before the batch is formed.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("ovmsx.genai")


class Job:
    """A request's work and the future its answer goes to."""

    __slots__ = ("future", "loop", "work")

    def __init__(self, work: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.work = work
        self.loop = loop
        self.future: asyncio.Future = loop.create_future()

    @property
    def abandoned(self) -> bool:
        return self.future.done()

    def answer(self, result: Any) -> None:
        self.loop.call_soon_threadsafe(_settle, self.future, result, None)

    def fail(self, error: BaseException) -> None:
        self.loop.call_soon_threadsafe(_settle, self.future, None, error)


def _settle(future: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled: the client went away
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class BatchWorker:
    def __init__(
        self,
        name: str,
        run: Callable[[list[Job]], None],
        rows: Callable[[Any], int],
        max_rows: int,
    ) -> None:
        self._run = run
        self._rows = rows
        self._max_rows = max_rows
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._next: Job | None = None  # taken from the queue, left for the next batch
        self._thread = threading.Thread(target=self._serve, name=f"ovmsx-{name}", daemon=True)
        self._thread.start()

    async def submit(self, work: Any) -> Any:
        job = Job(work, asyncio.get_running_loop())
        self._jobs.put(job)
        return await job.future

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join()

    def _serve(self) -> None:
        while True:
            jobs, stop = self._batch()
            if jobs:
                try:
                    self._run(jobs)
                except Exception as error:  # every job must get an answer
                    log.exception("batch of %d requests failed", len(jobs))
                    for job in jobs:
                        job.fail(error)
            if stop:
                return

    def _batch(self) -> tuple[list[Job], bool]:
        """The next batch of live jobs (it may be empty), and whether close() was called."""
        jobs: list[Job] = []
        rows = 0
        while True:
            if self._next is not None:
                job, self._next = self._next, None
            elif jobs:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    return jobs, False
            else:
                job = self._jobs.get()
            if job is None:
                return jobs, True
            if job.abandoned:
                continue
            size = self._rows(job.work)
            if jobs and rows + size > self._max_rows:
                self._next = job
                return jobs, False
            jobs.append(job)
            rows += size
