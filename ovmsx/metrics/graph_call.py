"""One call to a graph as its metrics count it; frontends and the ``/v3`` servables meter
their graph calls with it (``RequestObserver.graph_call`` hands them out)."""

from __future__ import annotations

from time import perf_counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ovmsx.metrics.series import GraphCallSeries


class GraphCall:
    """One call to a graph, as OVMS's MediaPipe executor counts it: the graph's instances in
    process while it runs; each request accepted (its packets handed to the graph) or rejected
    (refused before that); each response sent; a graph error when it fails after accepting;
    its processing time when it ends well."""

    __slots__ = ("_accepted", "_series", "_start")

    def __init__(self, series: GraphCallSeries) -> None:
        self._series = series
        self._accepted = False
        series.current.inc()
        self._start = perf_counter()

    def accepted(self) -> None:
        self._accepted = True
        self._series.accepted.inc()

    def rejected(self) -> None:
        self._series.rejected.inc()

    def responded(self) -> None:
        self._series.responses.inc()

    def end(self, ok: bool) -> None:
        """Once, when the call is over."""
        series = self._series
        series.current.dec()
        if ok:
            series.processing_time.observe((perf_counter() - self._start) * 1e6)
        elif self._accepted:
            series.error.inc()
