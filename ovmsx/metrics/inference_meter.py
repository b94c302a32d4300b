"""A model version's inference metrics: how long its inferences take and wait, and the requests
a pipeline makes to it.

``CompiledVersion.infer_here``, ``infer_submitted``, ``answer`` and ``respond``
(ovmsx/servables/model_loader.py) go through the version's meter when metrics are on, whatever
asked for the inference: a request to the model (through the general path or whole in C++), a
pipeline node, a graph's inference node. For a request answered whole in C++, the inference
time includes reading the request and writing the response, which the core does around it.

What is measured, and how it differs from OVMS: OVMS takes an infer request from its queue
(``ovms_wait_for_infer_req_time_us``), then infers (``ovms_inference_time_us``). ovmsx hands
the inputs to its C++ pool, which starts them at once on an idle infer request or queues them,
and reports only the outputs. So: when an infer request was idle at hand-off, the wait is 0 and
the whole time, hand-off to outputs, is the inference; when all were busy, the inference is taken
to last as long as the pool's recent ones did (its measured average from start to completion),
and the rest of the time is the wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from functools import partial
from time import perf_counter
from typing import TYPE_CHECKING

from ovmsx import _core
from ovmsx.metrics.values import CounterValue, HistogramValue

if TYPE_CHECKING:
    from ovmsx.metrics.series import _Off
    from ovmsx.servables.inference_dispatch import InferenceDispatcher

# The interface ("gRPC", "REST") of the request a pipeline runs for, set by the frontend around
# the run: as in OVMS, each model call of a pipeline counts as a successful ModelInfer of that
# model on the interface the pipeline request came from. Unset (None) elsewhere: a graph's own
# inferences are not counted as requests.
DAG_INTERFACE: ContextVar[str | None] = ContextVar("ovmsx_dag_interface", default=None)


class InferenceMeter:
    __slots__ = ("_dag_success", "_inference", "_size", "_wait", "_wait_none")

    def __init__(
        self,
        pool_size: int,
        inference: HistogramValue | _Off,
        wait: HistogramValue | _Off,
        dag_success: dict[str, CounterValue | _Off],
    ) -> None:
        self._size = pool_size
        self._inference = inference.observe
        self._wait = wait.observe
        self._wait_none = partial(wait.observe, 0.0)
        self._dag_success = dag_success

    def infer_here(
        self, pool: _core.InferencePool, tensors: Sequence[_core.Tensor], release_gil: bool
    ) -> list[_core.Tensor]:
        idle = pool.active < self._size
        start = perf_counter()
        outputs = pool.infer(tensors, release_gil)
        self._record(perf_counter() - start, idle, pool)
        return outputs

    async def infer_submitted(
        self,
        pool: _core.InferencePool,
        tensors: Sequence[_core.Tensor],
        dispatcher: InferenceDispatcher,
    ) -> list[_core.Tensor]:
        idle = pool.active < self._size
        start = perf_counter()
        outputs = await dispatcher.infer(pool, tensors)
        self._record(perf_counter() - start, idle, pool)
        return outputs

    def answer(
        self, direct: _core.DirectInfer, pool: _core.InferencePool, message: bytes
    ) -> bytes | None:
        idle = pool.active < self._size
        start = perf_counter()
        response = direct.answer(message)
        if response is not None:  # None: declined before inferring
            self._record(perf_counter() - start, idle, pool)
        return response

    async def respond(
        self,
        direct: _core.DirectInfer,
        pool: _core.InferencePool,
        message: bytes,
        dispatcher: InferenceDispatcher,
    ) -> bytes | None:
        idle = pool.active < self._size
        start = perf_counter()
        response = await dispatcher.respond(direct, message)
        if response is not None:
            self._record(perf_counter() - start, idle, pool)
        return response

    def _record(self, elapsed: float, idle: bool, pool: _core.InferencePool) -> None:
        if idle:
            self._wait_none()
            self._inference(elapsed * 1e6)
        else:
            self._queued(elapsed, pool)

    def _queued(self, elapsed: float, pool: _core.InferencePool) -> None:
        # Every infer request was busy: the job ran, on the first one to free, for about as
        # long as the pool's asynchronous runs take (infinity before any was measured: then
        # no wait is known).
        typical = pool.round_trip_time
        wait = elapsed - typical if typical < elapsed else 0.0
        self._wait(wait * 1e6)
        self._inference((elapsed - wait) * 1e6)

    def pipeline_call(self) -> None:
        """A pipeline node ran this model (once per demultiplexed shard)."""
        interface = DAG_INTERFACE.get()
        if interface is not None:
            self._dag_success[interface].inc()
