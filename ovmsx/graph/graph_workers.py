"""Threads that run graph instances, so user code never runs on the event loop.

``WorkerPool`` is a fixed set of threads fed by one queue. ``SerialJobs`` queues the jobs of
one graph instance so that at most one thread drives it at a time, in submission order;
different instances run in parallel. A job that raises is logged and the thread lives on.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable

log = logging.getLogger("ovmsx.graph")

Job = Callable[[], None]


class WorkerPool:
    def __init__(self, threads: int, name: str = "ovmsx-graph") -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
            for i in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    def close(self) -> None:
        """Let queued jobs finish, then stop the threads."""
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                job()
            except Exception:  # a bug in a job must not take a worker down
                log.exception("graph job failed")


class SerialJobs:
    """Jobs for one graph instance: run one at a time, in order, on the pool's threads."""

    def __init__(self, pool: WorkerPool) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        self._pending: deque[Job] = deque()
        self._running = False

    def submit(self, job: Job) -> None:
        with self._lock:
            self._pending.append(job)
            if self._running:
                return
            self._running = True
        self._pool.submit(self._run_next)

    def _run_next(self) -> None:
        with self._lock:
            job = self._pending.popleft()
        try:
            job()
        except Exception:  # logged here so the instance's later jobs still run
            log.exception("graph job failed")
        with self._lock:
            if not self._pending:
                self._running = False
                return
        # Back of the pool's queue: other instances get their turn between our jobs.
        self._pool.submit(self._run_next)
