"""The series each servable has, created when it loads, bound once so requests only update them.

A family that is not enabled hands out ``OFF``, which ignores every update: the code that counts
never asks which families are on.
"""

from __future__ import annotations

from ovmsx.metrics.families import (
    BUCKETS_US,
    CURRENT_GRAPHS,
    GRAPH_CALLS,
    GRAPH_ERROR,
    GRAPH_METHODS,
    GRAPH_PROCESSING_TIME,
    INTERFACES,
    KSERVE,
    LLM_GENERATED_TOKENS,
    LLM_KV_CACHE_USAGE,
    LLM_PROMPT_TOKENS,
    LLM_REQUESTS_RUNNING,
    LLM_REQUESTS_WAITING,
    LLM_TIME_PER_OUTPUT_TOKEN,
    LLM_TIME_TO_FIRST_TOKEN,
    MODEL_INFER,
    MODEL_METADATA,
    MODEL_READY,
    REQUEST_TIME,
    REQUESTS_ACCEPTED,
    REQUESTS_FAIL,
    REQUESTS_REJECTED,
    REQUESTS_SUCCESS,
    RESPONSES,
    FamilySpec,
    Kind,
)
from ovmsx.metrics.values import CounterValue, GaugeValue, HistogramValue

Value = CounterValue | GaugeValue | HistogramValue


class _Off:
    """The series of a family that is not enabled."""

    __slots__ = ()

    def inc(self) -> None: ...
    def add(self, count: int) -> None: ...
    def dec(self) -> None: ...
    def observe(self, value: float) -> None: ...
    def set(self, value: float) -> None: ...
    def read_from(self, read) -> None: ...


OFF = _Off()


class Family:
    """One enabled family and its series by label values (in ``spec.labels`` order)."""

    def __init__(self, spec: FamilySpec) -> None:
        self.spec = spec
        self.series: dict[tuple[str, ...], Value] = {}

    def child(self, *values: str) -> Value:
        """The series with these label values, created on first use. A series, once created,
        stays: a servable loaded again (a reload, a new version folder for an old number) counts
        on, as OVMS's do."""
        found = self.series.get(values)
        if found is None:
            kind = self.spec.kind
            if kind is Kind.COUNTER:
                found = CounterValue()
            elif kind is Kind.GAUGE:
                found = GaugeValue()
            else:
                found = HistogramValue(BUCKETS_US)
            self.series[values] = found
        return found


class Families:
    """The enabled families by name; ``child`` of any other is ``OFF``."""

    def __init__(self, enabled: dict[str, Family]) -> None:
        self.enabled = enabled

    def child(self, name: str, *values: str) -> Value | _Off:
        family = self.enabled.get(name)
        return OFF if family is None else family.child(*values)


class ServableSeries:
    """Request counts and times of a model version or a pipeline (OVMS's ServableMetricReporter):
    ModelInfer and ModelMetadata per version, ModelReady per name (no version label), for
    each interface; request time per interface."""

    __slots__ = ("fail", "request_time", "success")

    def __init__(self, families: Families, name: str, version: str) -> None:
        self.success: dict[tuple[str, str], CounterValue | _Off] = {}
        self.fail: dict[tuple[str, str], CounterValue | _Off] = {}
        self.request_time: dict[str, HistogramValue | _Off] = {}
        for interface in INTERFACES:
            for method in (MODEL_INFER, MODEL_METADATA, MODEL_READY):
                labelled = "" if method == MODEL_READY else version
                key = (interface, method)
                self.success[key] = families.child(
                    REQUESTS_SUCCESS, KSERVE, interface, method, name, labelled
                )
                self.fail[key] = families.child(
                    REQUESTS_FAIL, KSERVE, interface, method, name, labelled
                )
            self.request_time[interface] = families.child(REQUEST_TIME, interface, name, version)


class GraphCallSeries:
    """A graph's counters for one (interface, method): accepted, rejected, responses, errors,
    processing time, and the graph's instances running."""

    __slots__ = ("accepted", "current", "error", "processing_time", "rejected", "responses")

    def __init__(
        self, families: Families, name: str, api: str, interface: str, method: str
    ) -> None:
        labels = (api, interface, method, name)
        self.accepted = families.child(REQUESTS_ACCEPTED, *labels)
        self.rejected = families.child(REQUESTS_REJECTED, *labels)
        self.responses = families.child(RESPONSES, *labels)
        self.error = families.child(GRAPH_ERROR, *labels)
        # One histogram per method: REST's ModelInfer shares gRPC's, as in OVMS.
        self.processing_time = families.child(GRAPH_PROCESSING_TIME, method, name)
        self.current = families.child(CURRENT_GRAPHS, name)


class GraphSeries:
    """A graph's series (OVMS's MediapipeServableMetricReporter): per call kind, and ModelReady
    and ModelMetadata counts without a version."""

    __slots__ = ("calls", "fail", "success")

    def __init__(self, families: Families, name: str) -> None:
        self.calls = {
            (interface, method): GraphCallSeries(families, name, api, interface, method)
            for api, interface, method in GRAPH_CALLS
        }
        for method in GRAPH_METHODS:  # a histogram per method, V3's included
            families.child(GRAPH_PROCESSING_TIME, method, name)
        self.success: dict[tuple[str, str], CounterValue | _Off] = {}
        self.fail: dict[tuple[str, str], CounterValue | _Off] = {}
        for interface in INTERFACES:
            for method in (MODEL_METADATA, MODEL_READY):
                key = (interface, method)
                self.success[key] = families.child(
                    REQUESTS_SUCCESS, KSERVE, interface, method, name, ""
                )
                self.fail[key] = families.child(REQUESTS_FAIL, KSERVE, interface, method, name, "")


class LLMSeries:
    """An LLM servable's generation series: time to first token and per output token, tokens
    in and out, and its engine's requests running and waiting and KV-cache use, read from the
    engine's last report (``stats``) when scraped."""

    __slots__ = (
        "engine",
        "generated_tokens",
        "prompt_tokens",
        "time_per_output_token",
        "time_to_first_token",
    )

    def __init__(self, families: Families, name: str) -> None:
        self.time_to_first_token = families.child(LLM_TIME_TO_FIRST_TOKEN, name)
        self.time_per_output_token = families.child(LLM_TIME_PER_OUTPUT_TOKEN, name)
        self.prompt_tokens = families.child(LLM_PROMPT_TOKENS, name)
        self.generated_tokens = families.child(LLM_GENERATED_TOKENS, name)
        self.engine = None
        """The engine serving ``name`` now: its ``stats`` is the engine's last report
        (engine_process.Engine.stats)."""
        families.child(LLM_REQUESTS_RUNNING, name).read_from(
            lambda: self._stats().get("scheduled_requests", 0)
        )
        families.child(LLM_REQUESTS_WAITING, name).read_from(
            lambda: self._stats().get("requests", 0) - self._stats().get("scheduled_requests", 0)
        )
        families.child(LLM_KV_CACHE_USAGE, name).read_from(
            lambda: self._stats().get("cache_usage", 0.0)
        )

    def _stats(self) -> dict:
        return self.engine.stats if self.engine is not None else {}
