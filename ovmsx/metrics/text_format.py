"""The Prometheus text format (0.0.4) as OVMS writes it (prometheus-cpp's ``TextSerializer``).

Differences from prometheus-client's ``generate_latest``, which dashboards written for OVMS
would notice:

- counters keep their name: ``ovms_requests_success``, not ``ovms_requests_success_total``;
- a histogram's series writes ``_count``, ``_sum``, then its ``_bucket``s, with integral bounds
  (``le="10"``) and ``le`` after the other labels;
- a label whose value is empty is left out (OVMS's ModelReady and graph counters have no
  ``version``; Prometheus reads an empty label as an absent one anyway);
- numbers as C++ streams print them with 16 significant digits: ``5``, ``1234.5``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.core import Metric

# The format's own content type, which Prometheus recognizes (OVMS sends a bare "text/plain").
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def exposition(metrics: Iterable[Metric]) -> bytes:
    lines: list[str] = []
    for metric in metrics:
        name = metric.name
        lines.append(f"# HELP {name} {_escape_help(metric.documentation)}")
        lines.append(f"# TYPE {name} {metric.type}")
        if metric.type == "histogram":
            _histogram_lines(name, metric, lines)
            continue
        for sample in metric.samples:
            if sample.name.endswith("_created"):
                continue
            lines.append(f"{name}{_labels(sample.labels)} {_number(sample.value)}")
    return ("\n".join(lines) + "\n").encode() if lines else b""


def _histogram_lines(name: str, metric: Metric, lines: list[str]) -> None:
    # prometheus-client lists a series' buckets first; OVMS writes count and sum first.
    series: dict[tuple, dict[str, list]] = {}
    for sample in metric.samples:
        labels = dict(sample.labels)
        bound = labels.pop("le", None)
        kind = sample.name[len(name) :]
        entry = series.setdefault(tuple(sorted(labels.items())), {"_bucket": []})
        if kind == "_bucket":
            entry["_bucket"].append((bound, sample.value))
        else:
            entry[kind] = sample.value
    for key, entry in series.items():
        labels = dict(key)
        lines.append(f"{name}_count{_labels(labels)} {_number(entry['_count'])}")
        lines.append(f"{name}_sum{_labels(labels)} {_number(entry['_sum'])}")
        for bound, value in entry["_bucket"]:
            lines.append(f"{name}_bucket{_labels(labels, bound)} {_number(value)}")


def _labels(labels: dict[str, str], bound: str | None = None) -> str:
    pairs = [f'{key}="{_escape(value)}"' for key, value in sorted(labels.items()) if value != ""]
    if bound is not None:
        pairs.append(f'le="{bound}"')
    return "{" + ",".join(pairs) + "}" if pairs else ""


def _number(value: float) -> str:
    if value != value:
        return "Nan"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return f"{value:.16g}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")
