"""The exposition's text, line by line, as OVMS writes it (prometheus-cpp's text format)."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from ovmsx.metrics.families import KNOWN_FAMILIES
from ovmsx.metrics.serving_metrics import ServingMetrics
from ovmsx.metrics.settings import MetricsSettings


def _metrics(families=KNOWN_FAMILIES) -> ServingMetrics:
    return ServingMetrics(MetricsSettings(frozenset(families)))


def _lines(metrics: ServingMetrics) -> list[str]:
    body, content_type = metrics.exposition()
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    return body.decode().splitlines()


def test_nothing_loaded_nothing_exposed() -> None:
    assert _metrics().exposition()[0] == b""


def test_counters_keep_their_names() -> None:
    metrics = _metrics()
    metrics.on_pipeline_loaded("dag")
    series = metrics.pipeline_series("dag")
    assert series is not None
    for _ in range(5):
        series.success[("gRPC", "ModelInfer")].inc()
    lines = _lines(metrics)
    assert (
        "# HELP ovms_requests_success Number of successful requests to a model or a DAG." in lines
    )
    assert "# TYPE ovms_requests_success counter" in lines
    labels = 'api="KServe",interface="gRPC",method="ModelInfer",name="dag",version="1"'
    assert f"ovms_requests_success{{{labels}}} 5" in lines
    assert not [line for line in lines if "_total" in line or "_created" in line]


def test_model_ready_has_no_version_label() -> None:
    metrics = _metrics()
    metrics.on_pipeline_loaded("dag")
    ready = 'ovms_requests_fail{api="KServe",interface="REST",method="ModelReady",name="dag"} 0'
    assert ready in _lines(metrics)


def test_histogram_count_sum_then_buckets() -> None:
    metrics = _metrics()
    metrics.on_pipeline_loaded("dag")
    series = metrics.pipeline_series("dag")
    assert series is not None
    for microseconds in (5, 10, 11, 1234.5, 2e9):
        series.request_time["REST"].observe(microseconds)
    labels = 'interface="REST",name="dag",version="1"'
    lines = [line for line in _lines(metrics) if labels in line]
    assert lines[0] == f"ovms_request_time_us_count{{{labels}}} 5"
    assert lines[1] == f"ovms_request_time_us_sum{{{labels}}} {5 + 10 + 11 + 1234.5 + 2e9:.16g}"
    assert lines[2] == f'ovms_request_time_us_bucket{{{labels},le="10"}} 2'  # 10 is <= 10
    assert lines[3] == f'ovms_request_time_us_bucket{{{labels},le="18"}} 3'
    assert lines[2 + 8] == f'ovms_request_time_us_bucket{{{labels},le="1101"}} 3'
    assert lines[2 + 9] == f'ovms_request_time_us_bucket{{{labels},le="1983"}} 4'
    assert lines[-2] == f'ovms_request_time_us_bucket{{{labels},le="1474755971"}} 4'
    assert lines[-1] == f'ovms_request_time_us_bucket{{{labels},le="+Inf"}} 5'
    assert len(lines) == 2 + 33 + 1


def test_only_enabled_families_are_exposed() -> None:
    metrics = _metrics({"ovms_requests_fail", "ovms_current_graphs"})
    metrics.on_pipeline_loaded("dag")
    metrics.on_graph_loaded("graph")
    names = {family.name for family in text_string_to_metric_families(_lines_text(metrics))}
    assert names == {"ovms_requests_fail", "ovms_current_graphs"}


def test_graph_series() -> None:
    metrics = _metrics()
    metrics.on_graph_loaded("g")
    lines = _lines(metrics)
    assert 'ovms_current_graphs{name="g"} 0' in lines
    for method in ("ModelInfer", "ModelInferStream", "Unary", "Stream"):
        assert f'ovms_graph_processing_time_us_count{{method="{method}",name="g"}} 0' in lines
    calls = [line for line in lines if line.startswith("ovms_requests_accepted{")]
    assert calls == [
        f'ovms_requests_accepted{{api="{api}",interface="{where}",method="{method}",name="g"}} 0'
        for api, where, method in (
            ("KServe", "gRPC", "ModelInfer"),
            ("KServe", "gRPC", "ModelInferStream"),
            ("KServe", "REST", "ModelInfer"),
            ("V3", "REST", "Unary"),
            ("V3", "REST", "Stream"),
        )
    ]


def test_label_values_are_escaped() -> None:
    metrics = _metrics({"ovms_current_graphs"})
    metrics.on_graph_loaded('a "quoted"\\name')
    assert 'ovms_current_graphs{name="a \\"quoted\\"\\\\name"} 0' in _lines(metrics)
    (family,) = text_string_to_metric_families(_lines_text(metrics))
    assert family.samples[0].labels == {"name": 'a "quoted"\\name'}


def test_the_registry_serves_prometheus_client_tools_too() -> None:
    """The same registry, written by prometheus-client itself (with its own naming)."""
    metrics = _metrics({"ovms_requests_success"})
    metrics.on_pipeline_loaded("dag")
    text = generate_latest(metrics.registry).decode()
    assert 'ovms_requests_success_total{api="KServe",interface="gRPC",method="ModelInfer"' in text


def _lines_text(metrics: ServingMetrics) -> str:
    return metrics.exposition()[0].decode()
