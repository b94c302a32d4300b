"""The value behind one series: a counter, a gauge or a histogram, updated from any thread.

Every request updates a few of these, on gRPC's polling thread, the event loop or a graph
worker, so an update must cost next to nothing. A counter's ``inc`` and a histogram's
``observe`` are a single C call each, ``collections.deque.append`` (thread-safe, no lock, no
Python frame): the observations queue up, and ``fold`` adds them to the totals when the series
is read (a scrape) and every second on the event loop (ServingMetrics), so the queue holds at
most about a second of requests. Measured with bench/bench_metrics.py: this costs a request a
fraction of a lock-protected update (prometheus-client's children take a lock per update and
per bucket, and check exemplars).

Gauges change rarely (a graph call starting or ending, a version loading) and keep a lock.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial


class CounterValue:
    __slots__ = ("_lock", "_pending", "_total", "add", "inc")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: deque[int] = deque()
        self._total = 0
        self.inc: Callable[[], None] = partial(self._pending.append, 1)
        """Count one."""
        self.add: Callable[[int], None] = self._pending.append
        """Count this many."""

    def fold(self) -> None:
        """Add the queued counts to the total."""
        pending = self._pending
        with self._lock:
            # One popleft per item: appends may land meanwhile, and wait for the next fold.
            for _ in range(len(pending)):
                self._total += pending.popleft()

    @property
    def value(self) -> float:
        self.fold()
        return float(self._total)


class HistogramValue:
    """Observations in microseconds, counted per bucket (cumulated when read)."""

    __slots__ = ("_bounds", "_counts", "_lock", "_pending", "_sum", "observe")

    def __init__(self, bounds: Sequence[float]) -> None:
        self._lock = threading.Lock()
        self._bounds = tuple(bounds)
        self._counts = [0] * (len(self._bounds) + 1)  # the last one is +Inf's
        self._sum = 0.0
        self._pending: deque[float] = deque()
        self.observe: Callable[[float], None] = self._pending.append
        """Record one observation."""

    def fold(self) -> None:
        """Move the queued observations into the buckets."""
        pending, bounds, counts = self._pending, self._bounds, self._counts
        with self._lock:
            for _ in range(len(pending)):
                value = pending.popleft()
                # A bucket counts values <= its bound ("le"), which bisect_left finds.
                counts[bisect_left(bounds, value)] += 1
                self._sum += value

    def snapshot(self) -> tuple[list[int], float]:
        """(cumulative counts per bound, +Inf last; sum), as of one moment."""
        self.fold()
        with self._lock:
            counts = list(self._counts)
            total = self._sum
        running = 0
        for index, count in enumerate(counts):
            running += count
            counts[index] = running
        return counts, total


class GaugeValue:
    """A number that goes up and down, or that ``read`` computes when scraped."""

    __slots__ = ("_lock", "_read", "_value")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value = 0.0
        self._read: Callable[[], float] | None = None

    @property
    def value(self) -> float:
        read = self._read
        return float(read()) if read is not None else self._value

    def set(self, value: float) -> None:
        """A fixed value (and no function any more)."""
        self._read = None
        self._value = float(value)

    def read_from(self, read: Callable[[], float]) -> None:
        """Compute the value at each scrape (what it counts already exists elsewhere)."""
        self._read = read

    def inc(self) -> None:
        with self._lock:
            self._value += 1

    def dec(self) -> None:
        with self._lock:
            self._value -= 1
