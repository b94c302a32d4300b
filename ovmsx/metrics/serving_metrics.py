"""A server's metrics: the enabled families, each servable's series, and ``GET /metrics``'s body.

Series are created when a servable loads, as OVMS creates them (COMPAT §14): the ``on_*_loaded``
and ``on_*_unloaded`` hooks are called by whatever loads and retires servables, on the event
loop. A series outlives its servable's unload: counts are kept (OVMS keeps a retired version's
reporter), the gauges that describe a loaded version (streams, nireq, requests in process) drop
to 0, and a version loaded again counts on from where it was.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry

from ovmsx.metrics.collector import SeriesCollector
from ovmsx.metrics.families import (
    CURRENT_GRAPHS,
    CURRENT_REQUESTS,
    FAMILIES,
    INFER_REQ_ACTIVE,
    INFER_REQ_QUEUE_SIZE,
    INFERENCE_TIME,
    INTERFACES,
    MODEL_INFER,
    STREAMS,
    WAIT_FOR_INFER_REQ_TIME,
)
from ovmsx.metrics.inference_meter import InferenceMeter
from ovmsx.metrics.series import Families, Family, GraphSeries, LLMSeries, ServableSeries
from ovmsx.metrics.settings import MetricsSettings
from ovmsx.metrics.text_format import CONTENT_TYPE, exposition

if TYPE_CHECKING:
    from ovmsx.servables.model_loader import CompiledVersion

log = logging.getLogger("ovmsx.models")

PIPELINE_VERSION = "1"
# How often the observations queued by requests are folded into the totals (values.py): the
# queues then hold a fraction of a second of requests, and each fold is short.
FOLD_SECONDS = 0.25
# Per version, the gauges describing it while it is loaded.
_LOADED_GAUGES = (STREAMS, INFER_REQ_QUEUE_SIZE, CURRENT_REQUESTS, INFER_REQ_ACTIVE)


class ServingMetrics:
    """Implements the REST frontend's ``MetricsEndpoint``: ``exposition()``."""

    def __init__(self, settings: MetricsSettings) -> None:
        enabled = {name: Family(FAMILIES[name]) for name in FAMILIES if name in settings.families}
        self._families = Families(enabled)
        self.registry = CollectorRegistry(auto_describe=False)
        """prometheus-client's view of these metrics (this server's own registry)."""
        self.registry.register(SeriesCollector(enabled))
        self._versions: dict[tuple[str, str], ServableSeries] = {}
        self._pipelines: dict[str, ServableSeries] = {}
        self._graphs: dict[str, GraphSeries] = {}
        self._llms: dict[str, LLMSeries] = {}
        self._folding: asyncio.TimerHandle | None = None

    def exposition(self) -> tuple[bytes, str]:
        """The body of ``GET /metrics`` and its content type."""
        return exposition(self.registry.collect()), CONTENT_TYPE

    def fold(self) -> None:
        """Add every series' queued observations to its totals (reading a series does too)."""
        for family in self._families.enabled.values():
            for value in list(family.series.values()):
                fold = getattr(value, "fold", None)
                if fold is not None:
                    fold()

    def _keep_folding(self) -> None:
        """Fold every ``FOLD_SECONDS`` on the running loop, from the first servable loaded on
        (without a loop, as in a unit test, reading the series folds them)."""
        if self._folding is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._folding = loop.call_later(FOLD_SECONDS, self._fold_and_again, loop)

    def _fold_and_again(self, loop: asyncio.AbstractEventLoop) -> None:
        self.fold()
        self._folding = loop.call_later(FOLD_SECONDS, self._fold_and_again, loop)

    def close(self) -> None:
        """Stop folding (the server is stopping)."""
        if self._folding is not None:
            self._folding.cancel()
            self._folding = None

    # -- lifecycle (on the event loop) ------------------------------------------------------

    def on_version_loaded(self, name: str, version: int, compiled: CompiledVersion) -> None:
        """Version ``version`` of model ``name`` is available: its series exist from now on, its
        inferences are timed, its gauges describe ``compiled``."""
        self._keep_folding()
        label = str(version)
        families = self._families
        series = self._versions.get((name, label))
        if series is None:
            series = self._versions[(name, label)] = ServableSeries(families, name, label)
        pool = compiled.pool
        compiled.attach_meter(
            InferenceMeter(
                pool.size,
                families.child(INFERENCE_TIME, name, label),
                families.child(WAIT_FOR_INFER_REQ_TIME, name, label),
                {interface: series.success[(interface, MODEL_INFER)] for interface in INTERFACES},
            )
        )
        families.child(STREAMS, name, label).set(_streams(compiled, name, label))
        families.child(INFER_REQ_QUEUE_SIZE, name, label).set(pool.size)
        # Computed when scraped, from the pool itself: nothing to count per request. OVMS's
        # "requests in process" are the ones holding or waiting for an infer request.
        families.child(CURRENT_REQUESTS, name, label).read_from(lambda: pool.active + pool.waiting)
        families.child(INFER_REQ_ACTIVE, name, label).read_from(lambda: pool.active)

    def on_version_unloaded(self, name: str, version: int) -> None:
        """The version no longer serves: its gauges drop to 0 (and let go of its pool)."""
        label = str(version)
        for family in _LOADED_GAUGES:
            self._families.child(family, name, label).set(0)

    def on_pipeline_loaded(self, name: str) -> None:
        self._keep_folding()
        if name not in self._pipelines:
            self._pipelines[name] = ServableSeries(self._families, name, PIPELINE_VERSION)

    def on_pipeline_unloaded(self, name: str) -> None:
        """A pipeline keeps its counts; it has no gauges."""

    def on_graph_loaded(self, name: str) -> None:
        self._keep_folding()
        if CURRENT_GRAPHS not in self._families.enabled:
            log.info("DISABLED %s", CURRENT_GRAPHS)
        if name not in self._graphs:
            self._graphs[name] = GraphSeries(self._families, name)

    def on_graph_unloaded(self, name: str) -> None:
        """A graph keeps its counts; calls still running end their ``ovms_current_graphs``."""

    # -- lookup (any thread) ----------------------------------------------------------------

    def version_series(self, name: str, version: str) -> ServableSeries | None:
        return self._versions.get((name, version))

    def pipeline_series(self, name: str) -> ServableSeries | None:
        return self._pipelines.get(name)

    def graph_series(self, name: str) -> GraphSeries | None:
        return self._graphs.get(name)

    def llm_series(self, name: str) -> LLMSeries:
        """The generation series of LLM servable ``name``, made on first use (on the loop)."""
        series = self._llms.get(name)
        if series is None:
            series = self._llms[name] = LLMSeries(self._families, name)
        return series


def _streams(compiled: CompiledVersion, name: str, version: str) -> int:
    try:
        return int(compiled.compiled.get_property("NUM_STREAMS"))
    except Exception as error:  # a device that has no such property: the gauge says 0
        log.debug("model %s version %s: NUM_STREAMS unknown: %s", name, version, error)
        return 0
