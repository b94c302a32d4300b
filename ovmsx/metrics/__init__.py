"""Prometheus metrics with OVMS's families, labels and buckets, served on ``GET /metrics``.

``settings.metrics_settings`` reads ``--metrics_enable``/``--metrics_list`` or the config's
``monitoring`` section by OVMS's rules; ``serving_metrics.ServingMetrics`` holds the series
servables get when they load, and writes the exposition. Requests are counted through
``ovmsx.frontend.request_observer``. docs/metrics.md tells the whole story.

(Nothing is imported here: the command line reads the settings without loading
prometheus-client, which only a running server needs.)
"""
