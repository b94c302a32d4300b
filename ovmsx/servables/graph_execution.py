"""Running graph instances for requests: one per unary call, one per stream.

A stream's requests are jobs queued on the stream's own ``SerialJobs`` on the worker pool. A
unary call runs on the loop when every node may (``UnaryRunner``): built-in nodes that never
block it (inference awaited like a model served alone), and user code measured to be quicker
than a thread hop; otherwise it is one job on the worker pool, so slow user code never stalls
the loop. Results
of worker jobs come back with ``loop.call_soon_threadsafe``; a stream's output packets are
batched, so a generator that yields quickly wakes the loop once per batch, not per packet.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence

from ovmsx.graph.calculator import CalculatorNode
from ovmsx.graph.graph_plan import GraphPlan
from ovmsx.graph.graph_run import GraphRun, run_without_suspending
from ovmsx.graph.graph_workers import RunningJob, SerialJobs, WorkerPool
from ovmsx.graph.packet import Packet
from ovmsx.graph.single_pass import OneNodePass, SinglePass
from ovmsx.status import StatusCode, StatusError, status_error

log = logging.getLogger("ovmsx.graph")

# Calls one stream's instance makes per job before letting other instances run.
STREAM_BUDGET = 64
# What a stream's outbox carries back to the loop.
_PACKET, _REJECT, _END = range(3)


def run_unary(
    plan: GraphPlan,
    side_packets: dict[str, object],
    inputs: Sequence[tuple[str, object]],
    timestamp: int,
) -> dict[str, Packet]:
    """Feed one request, close the inputs, run to the end; the first packet of every output."""
    unary = _unary(plan, side_packets, inputs, timestamp, awaiting=False)
    return run_without_suspending(unary)


async def run_unary_async(
    plan: GraphPlan,
    side_packets: dict[str, object],
    inputs: Sequence[tuple[str, object]],
    timestamp: int,
) -> dict[str, Packet]:
    """``run_unary`` on the event loop, inference awaited."""
    return await _unary(plan, side_packets, inputs, timestamp, awaiting=True)


async def _unary(plan, side_packets, inputs, timestamp, awaiting: bool) -> dict[str, Packet]:
    first: dict[str, Packet] = {}
    run = _started(plan, side_packets, inputs, timestamp, first)
    try:
        if awaiting:
            await run.drain_async()
        else:
            run.drain()
    finally:
        run.abort()
    return _answer(plan, run, first)


def _started(plan, side_packets, inputs, timestamp, first: dict[str, Packet]) -> GraphRun:
    def keep_first(stream: str, packet: Packet) -> None:
        first.setdefault(stream, packet)

    run = GraphRun(plan, side_packets, keep_first)
    try:
        for stream, value in inputs:
            run.add_packet(stream, value, timestamp)
    except BaseException:
        run.abort()
        raise
    run.close_inputs()
    return run


def _answer(plan: GraphPlan, run: GraphRun, first: dict[str, Packet]) -> dict[str, Packet]:
    if run.error is not None:
        raise run.error
    return _complete(plan, first)


def _complete(plan: GraphPlan, first: dict[str, Packet]) -> dict[str, Packet]:
    missing = [name for name in plan.output_streams if name not in first]
    if missing:
        raise status_error(
            StatusCode.MEDIAPIPE_EXECUTION_ERROR,
            f"Unknown error during mediapipe execution: no packet on output stream "
            f"{', '.join(missing)}",
        )
    return first


class UnaryRunner:
    """Runs one request's graph instance on the loop or on a worker thread.

    On the loop when every node may run there now: built-in nodes that never block it
    (inference awaited, as for a model served alone; converters), and user-code nodes whose
    calls have proven quick. Otherwise on a worker, where the user-code calls are measured.
    Graphs that fit run in a single pass (single_pass.py), others through the scheduler.
    """

    __slots__ = ("_nodes", "_plan", "_single_pass")

    def __init__(self, plan: GraphPlan, nodes: Sequence[CalculatorNode]) -> None:
        self._plan = plan
        self._nodes = tuple(nodes)
        self._single_pass: SinglePass | OneNodePass | None = None
        if OneNodePass.fits(plan):
            self._single_pass = OneNodePass(plan)
        elif SinglePass.fits(plan):
            self._single_pass = SinglePass(plan)

    @property
    def on_loop(self) -> bool:
        return all(node.may_run_on_loop for node in self._nodes)

    @property
    def single_pass(self) -> bool:
        return self._single_pass is not None

    @property
    def runs_now(self) -> bool:
        """Whether a request can run right on the caller's thread: one pass of nodes that
        may run on the loop (quick ones), no scheduler, nothing to wait for."""
        return self._single_pass is not None and self.on_loop

    def run_now(
        self,
        side_packets: dict[str, object],
        inputs: Sequence[tuple[str, object]],
        timestamp: int,
    ) -> dict[str, Packet]:
        """One pass on the caller's thread, inference blocking: for ``runs_now`` graphs, and
        for one-pass graphs on a worker."""
        assert self._single_pass is not None
        in_flight = self._plan.in_flight
        in_flight.enter()
        try:
            return _complete(self._plan, self._single_pass.run(side_packets, inputs, timestamp))
        finally:
            in_flight.leave()

    async def run(
        self,
        workers: WorkerPool,
        side_packets: dict[str, object],
        inputs: Sequence[tuple[str, object]],
        timestamp: int,
    ) -> dict[str, Packet]:
        in_flight = self._plan.in_flight
        in_flight.enter()
        try:
            return await self._run(workers, side_packets, inputs, timestamp)
        finally:
            in_flight.leave()

    async def _run(
        self,
        workers: WorkerPool,
        side_packets: dict[str, object],
        inputs: Sequence[tuple[str, object]],
        timestamp: int,
    ) -> dict[str, Packet]:
        one_pass, plan = self._single_pass, self._plan
        if self.on_loop:
            if one_pass is not None:
                first = await one_pass.run_async(side_packets, inputs, timestamp)
                return _complete(plan, first)
            return await run_unary_async(plan, side_packets, inputs, timestamp)
        if one_pass is not None:
            return await call_in_worker(
                workers, lambda: self.run_now(side_packets, inputs, timestamp), plan
            )
        return await call_in_worker(
            workers, lambda: run_unary(plan, side_packets, inputs, timestamp), plan
        )


def _labels(plan: GraphPlan) -> str:
    return ", ".join(node.label for node in plan.nodes)


async def call_in_worker(
    pool: WorkerPool, function: Callable[[], object], plan: GraphPlan
) -> object:
    """``function()`` on a worker thread; its result or exception comes back to the caller.
    A caller that gives up (cancelled: deadline, client gone) before the job has ended leaves
    the thread to it and the pool a new one (``WorkerPool.abandon``); the log names ``plan``'s
    nodes."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    running = RunningJob()

    def job() -> None:
        running.started()
        try:
            result = function()
        except BaseException as error:
            loop.call_soon_threadsafe(_settle, future, None, error)
        else:
            loop.call_soon_threadsafe(_settle, future, result, None)
        finally:
            running.ended()

    pool.submit(job)
    try:
        return await future
    except asyncio.CancelledError:
        running.abandon(pool, f"a graph request of nodes {_labels(plan)}")
        raise


def _settle(future: asyncio.Future, result: object, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class GraphSession:
    """One graph instance serving one stream.

    ``on_packet(stream, packet)`` runs on the loop for every graph output packet, in order;
    ``on_reject(error)`` for a request whose packets the graph refused (the stream goes on);
    ``on_end(error)`` once, when the instance has finished (None) or failed.
    """

    def __init__(
        self,
        plan: GraphPlan,
        side_packets: dict[str, object],
        pool: WorkerPool,
        on_packet: Callable[[str, Packet], None],
        on_reject: Callable[[StatusError], None],
        on_end: Callable[[StatusError | None], None],
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._plan = plan
        self._side_packets = side_packets
        self._pool = pool
        self._jobs = SerialJobs(pool)
        # Process calls of slow user code running off the instance's thread (GraphRun's
        # offload), so a cancelled stream can leave their threads to them.
        self._detached: set[RunningJob] = set()
        self._closing = False  # the client is done; end once detached calls are back
        self._on_packet = on_packet
        self._on_reject = on_reject
        self._on_end = on_end
        self._run: GraphRun | None = None
        self._outbox: deque[tuple[int, str, object]] = deque()
        self._outbox_lock = threading.Lock()
        self._ended = False  # touched only by jobs (one at a time)
        plan.in_flight.enter()  # until _end: a retired graph's nodes outlive its streams

    # -- called on the loop ----------------------------------------------------------------

    def submit(self, inputs: Sequence[tuple[str, object]], timestamp: int) -> None:
        self._jobs.submit(lambda: self._feed(inputs, timestamp))

    def close(self) -> None:
        """The client sent its last request: finish what is in flight, then end."""
        self._jobs.submit(self._finish)

    def cancel(self) -> None:
        """The client is gone: stop at once. A job of the instance still running (a node
        that blocks) keeps its thread, and the pool gets a new one."""
        if not self._ended:
            what = f"a graph stream of nodes {_labels(self._plan)}"
            self._jobs.abandon_running(what)
            for running in list(self._detached):
                running.abandon(self._pool, what)
        self._jobs.submit(self._abort)

    # -- jobs (worker threads, one at a time) ----------------------------------------------

    def _instance(self) -> GraphRun:
        if self._run is None:
            self._run = GraphRun(self._plan, self._side_packets, self._deliver, self._offload)
        return self._run

    def _offload(self, call: Callable, resume: Callable) -> None:
        """Run a slow node's process call on the pool while the stream takes new requests;
        its result goes back through the stream's jobs (see GraphRun)."""
        running = RunningJob()
        self._detached.add(running)

        def work() -> None:
            running.started()
            try:
                result = call()
            finally:
                running.ended()
                self._detached.discard(running)
            self._jobs.submit(lambda: self._resume(resume, result))

        self._pool.submit(work)

    def _resume(self, resume: Callable, result: object) -> None:
        if self._ended or self._run is None:
            return
        resume(result)
        self._continue(self._run)
        if self._closing:
            self._finish()

    def _feed(self, inputs: Sequence[tuple[str, object]], timestamp: int) -> None:
        if self._ended:
            return
        try:
            run = self._instance()
            for stream, value in inputs:
                run.add_packet(stream, value, timestamp)
        except StatusError as error:
            if self._run is None or self._run.error is None:
                self._send(_REJECT, "", error)
                return
        except Exception as error:  # a bug must end the stream, not leave it hanging
            log.exception("graph stream failed")
            self._end(status_error(StatusCode.INTERNAL_ERROR, repr(error)))
            return
        self._continue(run)

    def _continue(self, run: GraphRun) -> None:
        if self._ended:
            return
        if run.drain(STREAM_BUDGET):
            self._jobs.submit(lambda: self._continue(run))  # more to do: queue behind others
        elif run.error is not None:
            self._end(run.error)

    def _finish(self) -> None:
        if self._ended:
            return
        run = self._instance()
        self._closing = True
        run.close_inputs()
        run.drain()
        if run.busy and run.error is None:
            return  # a detached call is still out: _resume finishes
        self._end(run.error)

    def _abort(self) -> None:
        if not self._ended:
            self._end(None)

    def _end(self, error: StatusError | None) -> None:
        self._ended = True
        if self._run is not None:
            self._run.abort()
        self._plan.in_flight.leave()
        self._send(_END, "", error)

    def _deliver(self, stream: str, packet: Packet) -> None:
        self._send(_PACKET, stream, packet)

    def _send(self, kind: int, stream: str, item: object) -> None:
        with self._outbox_lock:
            wake = not self._outbox
            self._outbox.append((kind, stream, item))
        if wake:
            self._loop.call_soon_threadsafe(self._flush)

    # -- back on the loop ------------------------------------------------------------------

    def _flush(self) -> None:
        with self._outbox_lock:
            items = list(self._outbox)
            self._outbox.clear()
        for kind, stream, item in items:
            if kind == _PACKET:
                self._on_packet(stream, item)
            elif kind == _REJECT:
                self._on_reject(item)
            else:
                self._on_end(item)
