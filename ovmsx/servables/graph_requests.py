"""What a graph takes from a request besides tensors: its timestamp and its side packets."""

from __future__ import annotations

import time
from collections.abc import Mapping

from ovmsx.graph.packet import MAX_TIMESTAMP, MIN_TIMESTAMP
from ovmsx.status import StatusCode, status_error

TIMESTAMP_PARAMETER = "OVMS_MP_TIMESTAMP"
RESERVED_SIDE_PACKET = "py"  # OVMS hands its Python node resources over under this name
PYTHON_RESOURCES = "python node resources"


def request_timestamp(parameters: Mapping[str, object]) -> int | None:
    """The ``OVMS_MP_TIMESTAMP`` a request sets, or None to let the server pick one."""
    if TIMESTAMP_PARAMETER not in parameters:
        return None
    value = parameters[TIMESTAMP_PARAMETER]
    if type(value) is not int:  # bool is an int in Python; only int64_param counts
        raise status_error(
            StatusCode.MEDIAPIPE_INVALID_TIMESTAMP,
            f"Invalid timestamp format in request parameter {TIMESTAMP_PARAMETER}. Should be int64",
        )
    if not MIN_TIMESTAMP <= value <= MAX_TIMESTAMP:
        raise status_error(
            StatusCode.MEDIAPIPE_INVALID_TIMESTAMP,
            f"{value} is outside [{MIN_TIMESTAMP}, {MAX_TIMESTAMP}]",
        )
    return value


def clock_timestamp(previous: int | None = None) -> int:
    """Wall-clock microseconds, as OVMS uses; kept above ``previous`` so that two requests in
    the same microsecond on one stream still get increasing timestamps."""
    now = time.time_ns() // 1000
    return now if previous is None or now > previous else previous + 1


def side_packets(parameters: Mapping[str, object]) -> dict[str, object]:
    """Every request parameter except the timestamp, as a graph input side packet."""
    packets = {}
    for name, value in parameters.items():
        if name == TIMESTAMP_PARAMETER:
            continue
        if name == RESERVED_SIDE_PACKET:
            raise status_error(
                StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR,
                f"Incoming input side packet: {name} is special reserved name and cannot be used",
            )
        if not isinstance(value, bool | int | str):
            raise status_error(
                StatusCode.NOT_IMPLEMENTED,
                "Handling parameters of other types than: bool, string, int64 is not supported",
            )
        packets[name] = value
    # PythonExecutorCalculator nodes read their resources from this side packet in OVMS; here
    # the node holds them itself, so the packet only has to exist.
    packets[RESERVED_SIDE_PACKET] = PYTHON_RESOURCES
    return packets
