"""OpenVINO properties this process adds to every model it compiles for a device, unless the
model's ``plugin_config`` sets them.

Process-wide on purpose: they describe the process's share of the machine, not a model. With
``--grpc_workers N`` each serving process compiles its CPU models with ``INFERENCE_NUM_THREADS``
= cores // N, so that N processes do not each start a thread per core (docs/serving.md,
"Several serving processes").
"""

from __future__ import annotations

from collections.abc import Mapping

_BY_DEVICE: dict[str, dict[str, str]] = {}


def set_defaults(device: str, properties: Mapping[str, str]) -> None:
    """Replace the defaults for ``device`` (a ``target_device`` as written, e.g. ``"CPU"``)."""
    _BY_DEVICE[device] = dict(properties)


def defaults_for(device: str) -> Mapping[str, str]:
    """The defaults for ``device``; empty unless ``set_defaults`` named that exact device (a
    property one device takes may be refused by another, e.g. behind ``AUTO``)."""
    return _BY_DEVICE.get(device, {})
