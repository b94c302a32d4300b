"""Hands ovmsx's series to prometheus-client at scrape time, as its metric families.

Registered in the server's own ``CollectorRegistry`` (never prometheus-client's global one, so
that several servers in one process keep apart), it makes the registry hold every enabled
family: ``text_format.exposition`` writes it in OVMS's text format, and any prometheus-client
tool (``generate_latest``, a push gateway) can use the same registry.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from ovmsx.metrics.families import BUCKETS_US, Kind
from ovmsx.metrics.series import Family
from ovmsx.metrics.values import CounterValue, GaugeValue, HistogramValue

# Bucket bounds as OVMS writes them: integers, and +Inf.
_BOUNDS = (*(str(bound) for bound in BUCKETS_US), "+Inf")


class SeriesCollector(Collector):
    def __init__(self, families: Mapping[str, Family]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        for family in self._families.values():
            spec = family.spec
            # A copy taken at once (the loop may add series meanwhile, on another thread).
            series = list(family.series.items())
            if not series:
                continue  # prometheus-cpp leaves out families without series, and so does ovmsx
            labels = list(spec.labels)
            if spec.kind is Kind.COUNTER:
                metric = CounterMetricFamily(spec.name, spec.help, labels=labels)
                for values, counter in series:
                    assert isinstance(counter, CounterValue)
                    metric.add_metric(values, counter.value)
            elif spec.kind is Kind.GAUGE:
                metric = GaugeMetricFamily(spec.name, spec.help, labels=labels)
                for values, gauge in series:
                    assert isinstance(gauge, GaugeValue)
                    metric.add_metric(values, gauge.value)
            else:
                metric = HistogramMetricFamily(spec.name, spec.help, labels=labels)
                for values, histogram in series:
                    assert isinstance(histogram, HistogramValue)
                    counts, total = histogram.snapshot()
                    metric.add_metric(values, list(zip(_BOUNDS, counts, strict=True)), total)
            yield metric
