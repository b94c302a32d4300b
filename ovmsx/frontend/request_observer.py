"""Per-request accounting, the same for every frontend: metrics, and the per-request log lines.

Each frontend reports every servable call (ModelInfer, ModelInferStream, ModelMetadata,
ModelReady) to ``RequestObserver.finished`` at the one place its outcome is known, and runs graph
calls with a ``GraphCall`` from ``graph_call``. The observer updates the servable's series
(ovmsx/metrics) and, at DEBUG, writes the request's line: OVMS logs request failures at DEBUG
only, never at INFO, so a client sending bad requests cannot flood the log.

Cost: with metrics off, a frontend skips all of this on success (``counting`` is False and the
log is not at DEBUG: it does not even read the clock); failures always come here, for their line.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ovmsx.metrics.families import MODEL_INFER
from ovmsx.metrics.graph_call import GraphCall
from ovmsx.status import StatusCode, StatusError

if TYPE_CHECKING:
    from ovmsx.metrics.series import GraphSeries, ServableSeries
    from ovmsx.metrics.serving_metrics import ServingMetrics
    from ovmsx.servables.registry import ServableRegistry

log = logging.getLogger("ovmsx.frontend")

MODEL = "model"
PIPELINE = "pipeline"
GRAPH = "graph"

# Failures to find the servable a request names, which OVMS logs as such.
_LOOKUP_FAILURES = frozenset(
    {
        StatusCode.MODEL_NAME_MISSING,
        StatusCode.MODEL_VERSION_MISSING,
        StatusCode.MODEL_VERSION_INVALID_FORMAT,
        StatusCode.MODEL_VERSION_NOT_LOADED_YET,
        StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE,
        StatusCode.PIPELINE_DEFINITION_NOT_LOADED_YET,
        StatusCode.PIPELINE_DEFINITION_NOT_LOADED_ANYMORE,
        StatusCode.MEDIAPIPE_DEFINITION_NOT_LOADED_YET,
        StatusCode.MEDIAPIPE_DEFINITION_NOT_LOADED_ANYMORE,
    }
)


class RequestObserver:
    def __init__(self, registry: ServableRegistry, metrics: ServingMetrics | None) -> None:
        self._registry = registry
        self._metrics = metrics
        self.counting = metrics is not None
        """Whether metrics are on: frontends then time every request and report successes."""

    def failed(
        self, interface: str, method: str, name: str, version: str | None, error: BaseException
    ) -> None:
        """A call to ``name`` failed: reported on the series of whatever the name names."""
        registry = self._registry
        if name in registry.graphs:
            kind: str | None = GRAPH
        elif name in registry.pipelines:
            kind = PIPELINE
        else:
            kind = MODEL if name in registry.models else None
        self.finished(interface, method, name, version, kind, False, 0.0, error)

    @property
    def timing(self) -> bool:
        """Whether a successful request must be timed and reported: metrics are on, or its
        DEBUG line is written."""
        return self.counting or log.isEnabledFor(logging.DEBUG)

    def finished(
        self,
        interface: str,
        method: str,
        name: str,
        version: str | None,
        kind: str | None,
        ok: bool,
        seconds: float,
        error: BaseException | None = None,
    ) -> None:
        """One call to servable ``name`` (of ``kind`` "model", "pipeline", "graph", or None
        when the name matched nothing) over ``interface`` ("gRPC", "REST") has ended.

        ``version``: the version that answered, or the one the request named ("" or None = the
        default) when it failed; ``seconds``: the whole call, for successes; ``error``: why it
        failed, for its log line. Counted as OVMS counts: on the series of the servable (and
        version) the request reached, so a request naming an unknown servable or version is
        not counted; graphs count ModelReady and ModelMetadata here (their inferences through
        ``graph_call``); the request time is kept for successful ModelInfer calls.
        """
        metrics = self._metrics
        if metrics is not None and kind is not None:
            series: ServableSeries | GraphSeries | None
            if kind == MODEL:
                reached = version if version and version != "0" else self._default_version(name)
                series = metrics.version_series(name, reached)
            elif kind == PIPELINE:
                series = metrics.pipeline_series(name)
            else:
                series = metrics.graph_series(name)
                if method == MODEL_INFER:
                    series = None  # a graph's inferences count through its GraphCall
            if series is not None:
                key = (interface, method)
                if ok:
                    series.success.get(key, _NONE).inc()
                    if method == MODEL_INFER:
                        series.request_time[interface].observe(seconds * 1e6)
                else:
                    series.fail.get(key, _NONE).inc()
        if log.isEnabledFor(logging.DEBUG):
            _log_line(interface, method, name, version, ok, seconds, error)

    def _default_version(self, name: str) -> str:
        """The version a request naming none reached: the model's default one."""
        try:
            return str(self._registry.model(name).default_version().version)
        except StatusError:
            return ""  # none: OVMS counts nothing either

    def graph_call(self, interface: str, method: str, name: str) -> GraphCall | None:
        """The counters of one graph call (unary, or a whole stream) when metrics are on."""
        metrics = self._metrics
        if metrics is None:
            return None
        graph = metrics.graph_series(name)
        if graph is None:
            return None
        return GraphCall(graph.calls[(interface, method)])


class _NoSeries:
    __slots__ = ()

    def inc(self) -> None: ...


_NONE = _NoSeries()


def _log_line(
    interface: str,
    method: str,
    name: str,
    version: str | None,
    ok: bool,
    seconds: float,
    error: BaseException | None,
) -> None:
    if ok:
        log.debug(
            "Total %s request processing time: %.3f ms; %s servable: %s; version: %s",
            interface,
            seconds * 1e3,
            method,
            name,
            version or "default",
        )
        return
    if isinstance(error, StatusError) and error.code in _LOOKUP_FAILURES:
        log.debug("Getting modelInstance or pipeline failed. %s", error)
        return
    reason = "" if error is None else f": {error}"
    log.debug(
        "[servable name: %s version: %s] %s %s request failed%s",
        name,
        version or "default",
        interface,
        method,
        reason,
    )
