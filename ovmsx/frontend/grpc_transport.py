"""Which gRPC transport serves: ovmsx's own on grpcio's Cython layer, or grpc.aio.

``grpc_core.CoreServer`` polls grpcio's C-core completion queue through ``grpc._cython.cygrpc``
and answers quick requests on that thread, about twice as fast as grpc.aio for a small model
(docs/performance.md). That layer is private to grpcio and may change in any release, so it is
used only on the grpcio releases it was built and tested for (CI serves on the oldest and the
newest); on any other release, or if the names it needs are missing, the server logs one
warning naming the grpcio version and serves on ``grpc_aio.AioServer``, grpcio's public API.

``OVMSX_GRPC_TRANSPORT=aio`` (or ``core``) chooses by hand: ``aio`` to rule the fast transport
out, ``core`` to try it on an untested release (with the same warning).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import grpc

from ovmsx.frontend.grpc_methods import Method
from ovmsx.frontend.memory_budget import MemoryBudget

if TYPE_CHECKING:
    from ovmsx.frontend.grpc_aio import AioServer
    from ovmsx.frontend.grpc_core import CoreServer

    GrpcServer = CoreServer | AioServer
else:
    GrpcServer = object

log = logging.getLogger("ovmsx.frontend")

# The grpcio releases (major, minor) whose Cython layer grpc_core.py was tested on.
CORE_TESTED = ((1, 67), (1, 85))
# The names of grpcio's Cython layer that grpc_core.py uses.
CORE_NAMES = (
    "CompletionQueue",
    "Server",
    "CompletionType",
    "ReceiveMessageOperation",
    "SendInitialMetadataOperation",
    "SendMessageOperation",
    "SendStatusFromServerOperation",
    "ReceiveCloseOnServerOperation",
)
ENVIRONMENT = "OVMSX_GRPC_TRANSPORT"


def _release(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def core_layer_problem(version: str = grpc.__version__) -> str | None:
    """Why the fast transport cannot serve on this grpcio; None when it can."""
    release = _release(version)
    low, high = CORE_TESTED
    tested = f"{low[0]}.{low[1]} to {high[0]}.{high[1]}"
    if release is None or not low <= release <= high:
        return f"grpcio {version} is not a release its fast transport was built for ({tested})"
    try:
        from grpc._cython import cygrpc
    except ImportError as error:
        return f"grpcio {version} has no Cython layer to serve on ({error})"
    missing = [name for name in CORE_NAMES if not hasattr(cygrpc, name)]
    if missing:
        return f"grpcio {version} lacks {', '.join(missing)} in its Cython layer"
    return None


def create_transport(
    methods: Mapping[str, Method],
    options: Iterable[tuple[str, int | str]],
    budget: MemoryBudget | None = None,
) -> GrpcServer:
    """A ``CoreServer`` where grpcio's Cython layer is the one it was built for, else an
    ``AioServer``; both on the running loop."""
    choice = os.environ.get(ENVIRONMENT, "").strip().lower()
    if choice not in ("", "core", "aio"):
        log.warning("%s=%s is not 'core' or 'aio'; ignored", ENVIRONMENT, choice)
        choice = ""
    if choice == "aio":
        log.info("gRPC is served on grpc.aio, as %s asks", ENVIRONMENT)
        return _aio_server(methods, options, budget)
    problem = core_layer_problem()
    if problem is not None and choice != "core":
        log.warning("%s; gRPC is served on grpc.aio, grpcio's public API, instead (slower for "
                    "quick models)", problem)  # fmt: skip
        return _aio_server(methods, options, budget)
    if problem is not None:
        log.warning("%s; %s=core asks to serve on it all the same", problem, ENVIRONMENT)
    from ovmsx.frontend.grpc_core import CoreServer

    return CoreServer(methods, options, asyncio.get_running_loop(), budget)


def _aio_server(
    methods: Mapping[str, Method],
    options: Iterable[tuple[str, int | str]],
    budget: MemoryBudget | None,
) -> GrpcServer:
    from ovmsx.frontend.grpc_aio import AioServer

    return AioServer(methods, options, asyncio.get_running_loop(), budget)
