"""Threads that run graph instances, so user code never runs on the event loop.

``WorkerPool`` is a fixed set of threads fed by one queue. ``SerialJobs`` queues the jobs of
one graph instance so that at most one thread drives it at a time, in submission order;
different instances run in parallel. A job that raises is logged and the thread lives on.

A job whose caller gave up (a deadline passed, the client left) may still be running user code
that never returns: ``abandon`` hands its thread over to that job and starts a new one in its
place, so a node that blocks costs one thread, never the pool. The abandoned thread ends once
its job does; ``close`` does not wait for one that never does.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable

from ovmsx.call_timer import mark_worker_thread

log = logging.getLogger("ovmsx.graph")

Job = Callable[[], None]


class WorkerPool:
    def __init__(self, threads: int, name: str = "ovmsx-graph") -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._name = name
        self._started = itertools.count()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []  # under _lock, abandoned ones included
        self._abandoned: set[threading.Thread] = set()  # under _lock
        for _ in range(threads):
            self._start_thread()

    def _start_thread(self) -> None:
        thread = threading.Thread(
            target=self._work, name=f"{self._name}-{next(self._started)}", daemon=True
        )
        self._threads.append(thread)
        thread.start()

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    def abandon(self, thread: threading.Thread, what: str) -> None:
        """The caller of the job running on ``thread`` gave up: leave the thread to that job
        and start another. Must be called before the job returns (``RunningJob`` sees to it)."""
        with self._lock:
            if thread not in self._threads or thread in self._abandoned:
                return
            self._abandoned.add(thread)
            self._start_thread()
            stuck = len(self._abandoned)
        log.warning(
            "%s still running after its caller gave up; a new graph worker takes its place "
            "(%d held by such work)",
            what,
            stuck,
        )

    def close(self) -> None:
        """Let queued jobs finish, then stop the threads; threads held by abandoned jobs are
        not waited for (they end with their job, or with the process)."""
        with self._lock:
            serving = [t for t in self._threads if t not in self._abandoned]
            stuck = [t.name for t in self._abandoned]
        for _ in serving:
            self._jobs.put(None)
        for thread in serving:
            thread.join()
        if stuck:
            log.warning("graph workers still held by abandoned work: %s", ", ".join(stuck))

    def _work(self) -> None:
        mark_worker_thread()
        me = threading.current_thread()
        while (job := self._jobs.get()) is not None:
            try:
                job()
            except Exception:  # a bug in a job must not take a worker down
                log.exception("graph job failed")
            with self._lock:
                if me in self._abandoned:  # replaced while it ran this job
                    self._abandoned.discard(me)
                    self._threads.remove(me)
                    return


class RunningJob:
    """Which thread runs a job right now, so that a caller giving up can ``abandon`` it. The
    lock orders ``abandon`` before the job's end: the thread then sees it was replaced."""

    __slots__ = ("_lock", "_thread")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def started(self) -> None:
        with self._lock:
            self._thread = threading.current_thread()

    def ended(self) -> None:
        with self._lock:
            self._thread = None

    def abandon(self, pool: WorkerPool, what: str) -> None:
        with self._lock:
            if self._thread is not None:
                pool.abandon(self._thread, what)


class SerialJobs:
    """Jobs for one graph instance: run one at a time, in order, on the pool's threads."""

    def __init__(self, pool: WorkerPool) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        self._pending: deque[Job] = deque()
        self._running = False
        self._current = RunningJob()

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
        self._current.started()
        try:
            job()
        except Exception:  # logged here so the instance's later jobs still run
            log.exception("graph job failed")
        finally:
            self._current.ended()
        with self._lock:
            if not self._pending:
                self._running = False
                return
        # Back of the pool's queue: other instances get their turn between our jobs.
        self._pool.submit(self._run_next)

    def abandon_running(self, what: str) -> None:
        """Nobody waits for the job running now any more (see ``WorkerPool.abandon``)."""
        self._current.abandon(self._pool, what)
