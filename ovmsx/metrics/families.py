"""The metric families OVMS exposes: names, types, labels, HELP text, buckets and which are on.

Everything here is OVMS's, spelled as OVMS spells it (``src/model_metric_reporter.cpp``,
``src/metrics/metric_config.cpp``), so that dashboards and alerts written for OVMS read ovmsx's
``/metrics`` unchanged.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Kind(enum.Enum):
    COUNTER = "counter"
    GAUGE = "gauge"
    HISTOGRAM = "histogram"


@dataclass(frozen=True)
class FamilySpec:
    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...]
    """Label names, in the order series keys give their values. A series whose value for a
    label is "" has no such label in the exposition (OVMS's ModelReady counters and graph
    counters have no ``version``); Prometheus treats an empty label as an absent one."""


# Every histogram: floor(10 * 1.8**i) microseconds for i = 0..32 (OVMS's NUMBER_OF_BUCKETS,
# BUCKET_MULTIPLIER and BUCKET_POWER_BASE), written out so that no floating-point rounding can
# move a bound.
BUCKETS_US: tuple[int, ...] = (
    10, 18, 32, 58, 104, 188, 340, 612, 1101, 1983, 3570, 6426, 11568, 20822, 37481, 67466,
    121439, 218591, 393464, 708235, 1274823, 2294682, 4130428, 7434771, 13382588, 24088659,
    43359586, 78047255, 140485060, 252873108, 455171596, 819308872, 1474755971,
)  # fmt: skip

REQUESTS_SUCCESS = "ovms_requests_success"
REQUESTS_FAIL = "ovms_requests_fail"
REQUEST_TIME = "ovms_request_time_us"
INFERENCE_TIME = "ovms_inference_time_us"
WAIT_FOR_INFER_REQ_TIME = "ovms_wait_for_infer_req_time_us"
STREAMS = "ovms_streams"
CURRENT_REQUESTS = "ovms_current_requests"
INFER_REQ_QUEUE_SIZE = "ovms_infer_req_queue_size"
INFER_REQ_ACTIVE = "ovms_infer_req_active"
CURRENT_GRAPHS = "ovms_current_graphs"
REQUESTS_ACCEPTED = "ovms_requests_accepted"
REQUESTS_REJECTED = "ovms_requests_rejected"
RESPONSES = "ovms_responses"
GRAPH_ERROR = "ovms_graph_error"
GRAPH_PROCESSING_TIME = "ovms_graph_processing_time_us"
# Beyond OVMS, which has no generation metrics: one series each per LLM servable (graph name).
LLM_TIME_TO_FIRST_TOKEN = "ovmsx_llm_time_to_first_token_us"
LLM_TIME_PER_OUTPUT_TOKEN = "ovmsx_llm_time_per_output_token_us"
LLM_PROMPT_TOKENS = "ovmsx_llm_prompt_tokens"
LLM_GENERATED_TOKENS = "ovmsx_llm_generated_tokens"
LLM_REQUESTS_RUNNING = "ovmsx_llm_requests_running"
LLM_REQUESTS_WAITING = "ovmsx_llm_requests_waiting"
LLM_KV_CACHE_USAGE = "ovmsx_llm_kv_cache_usage_percent"

_REQUEST_LABELS = ("api", "interface", "method", "name", "version")
_GRAPH_REQUEST_LABELS = ("api", "interface", "method", "name")
_VERSION = ("name", "version")

FAMILIES: dict[str, FamilySpec] = {
    spec.name: spec
    for spec in (
        FamilySpec(
            REQUESTS_SUCCESS,
            Kind.COUNTER,
            "Number of successful requests to a model or a DAG.",
            _REQUEST_LABELS,
        ),
        FamilySpec(
            REQUESTS_FAIL,
            Kind.COUNTER,
            "Number of failed requests to a model or a DAG.",
            _REQUEST_LABELS,
        ),
        FamilySpec(
            REQUEST_TIME,
            Kind.HISTOGRAM,
            "Processing time of requests to a model or a DAG.",
            ("interface", "name", "version"),
        ),
        FamilySpec(
            INFERENCE_TIME,
            Kind.HISTOGRAM,
            "Inference execution time in the OpenVINO backend.",
            _VERSION,
        ),
        FamilySpec(
            WAIT_FOR_INFER_REQ_TIME,
            Kind.HISTOGRAM,
            "Request waiting time in the scheduling queue.",
            _VERSION,
        ),
        FamilySpec(STREAMS, Kind.GAUGE, "Number of OpenVINO execution streams.", _VERSION),
        FamilySpec(
            CURRENT_REQUESTS,
            Kind.GAUGE,
            "Number of inference requests currently in process.",
            _VERSION,
        ),
        FamilySpec(
            INFER_REQ_QUEUE_SIZE, Kind.GAUGE, "Inference request queue size (nireq).", _VERSION
        ),
        FamilySpec(
            INFER_REQ_ACTIVE,
            Kind.GAUGE,
            "Number of currently consumed inference request from the processing queue.",
            _VERSION,
        ),
        FamilySpec(CURRENT_GRAPHS, Kind.GAUGE, "Number of MediaPipe graphs in process.", ("name",)),
        FamilySpec(
            REQUESTS_ACCEPTED,
            Kind.COUNTER,
            "Number of accepted requests which ended up inserting packet(s) into the MediaPipe "
            "graph.",
            _GRAPH_REQUEST_LABELS,
        ),
        FamilySpec(
            REQUESTS_REJECTED,
            Kind.COUNTER,
            "Number of rejected requests which did not end up being inserted into the MediaPipe "
            "graph.",
            _GRAPH_REQUEST_LABELS,
        ),
        FamilySpec(
            RESPONSES,
            Kind.COUNTER,
            "Number of responses generated the MediaPipe graph.",
            _GRAPH_REQUEST_LABELS,
        ),
        FamilySpec(
            GRAPH_ERROR,
            Kind.COUNTER,
            "Number of errors generated by the MediaPipe graph.",
            _GRAPH_REQUEST_LABELS,
        ),
        FamilySpec(
            GRAPH_PROCESSING_TIME,
            Kind.HISTOGRAM,
            "Time packet spent in the MediaPipe graph.",
            ("method", "name"),
        ),
        FamilySpec(
            LLM_TIME_TO_FIRST_TOKEN,
            Kind.HISTOGRAM,
            "Time from a generation request's arrival to its first generated text.",
            ("name",),
        ),
        FamilySpec(
            LLM_TIME_PER_OUTPUT_TOKEN,
            Kind.HISTOGRAM,
            "Time per generated token after the first, averaged over each request.",
            ("name",),
        ),
        FamilySpec(LLM_PROMPT_TOKENS, Kind.COUNTER, "Prompt tokens processed.", ("name",)),
        FamilySpec(LLM_GENERATED_TOKENS, Kind.COUNTER, "Tokens generated.", ("name",)),
        FamilySpec(
            LLM_REQUESTS_RUNNING,
            Kind.GAUGE,
            "Generation requests the LLM engine is scheduling now.",
            ("name",),
        ),
        FamilySpec(
            LLM_REQUESTS_WAITING,
            Kind.GAUGE,
            "Generation requests in the LLM engine waiting to be scheduled.",
            ("name",),
        ),
        FamilySpec(
            LLM_KV_CACHE_USAGE,
            Kind.GAUGE,
            "Share of the LLM engine's KV cache in use, in percent.",
            ("name",),
        ),
    )
}
LLM_FAMILIES: frozenset[str] = frozenset(
    {
        LLM_TIME_TO_FIRST_TOKEN,
        LLM_TIME_PER_OUTPUT_TOKEN,
        LLM_PROMPT_TOKENS,
        LLM_GENERATED_TOKENS,
        LLM_REQUESTS_RUNNING,
        LLM_REQUESTS_WAITING,
        LLM_KV_CACHE_USAGE,
    }
)

# What ``--metrics_enable`` turns on when no list is given: OVMS's 13 (its --help names 6), and
# ovmsx's LLM families (which have series only where an LLM is served).
DEFAULT_FAMILIES: frozenset[str] = frozenset(
    {
        CURRENT_REQUESTS,
        REQUESTS_SUCCESS,
        REQUESTS_FAIL,
        REQUEST_TIME,
        STREAMS,
        INFERENCE_TIME,
        WAIT_FOR_INFER_REQ_TIME,
        CURRENT_GRAPHS,
        REQUESTS_ACCEPTED,
        REQUESTS_REJECTED,
        GRAPH_ERROR,
        GRAPH_PROCESSING_TIME,
        RESPONSES,
    }
    | LLM_FAMILIES
)
# Only on when listed.
OPTIONAL_FAMILIES: frozenset[str] = frozenset({INFER_REQ_QUEUE_SIZE, INFER_REQ_ACTIVE})
# The names a metrics list may hold. (OVMS documents ovms_graph_request_latency_us too, but no
# list can enable it: it refuses the name, and so does ovmsx.)
KNOWN_FAMILIES: frozenset[str] = DEFAULT_FAMILIES | OPTIONAL_FAMILIES

# Label values.
KSERVE = "KServe"
V3 = "V3"
GRPC = "gRPC"
REST = "REST"
INTERFACES = (GRPC, REST)
MODEL_INFER = "ModelInfer"
MODEL_INFER_STREAM = "ModelInferStream"
MODEL_METADATA = "ModelMetadata"
MODEL_READY = "ModelReady"
UNARY = "Unary"
STREAM = "Stream"
# The (api, interface, method) series every graph has in its accepted, rejected, responses
# and graph_error counters (V3: the OpenAI-compatible endpoints, counted by genai/v3_api.py).
GRAPH_CALLS: tuple[tuple[str, str, str], ...] = (
    (KSERVE, GRPC, MODEL_INFER),
    (KSERVE, GRPC, MODEL_INFER_STREAM),
    (KSERVE, REST, MODEL_INFER),
    (V3, REST, UNARY),
    (V3, REST, STREAM),
)
GRAPH_METHODS = (MODEL_INFER, MODEL_INFER_STREAM, UNARY, STREAM)
