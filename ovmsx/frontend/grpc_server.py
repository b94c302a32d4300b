"""The gRPC server hosting the KServe service, with ovmsx's transport settings.

Settings (what a Python gRPC server can tune; docs/serving.md explains each):
- message size limits of 1 GiB each way, as OVMS;
- no per-connection stream limit below gRPC's default, so one client's concurrency is not
  serialized (OVMS caps streams at the core count; a Python server gains nothing from that);
- SO_REUSEPORT off, so a second server on the same port fails instead of silently sharing it;
  on only for the processes of ``--grpc_workers N`` (ovmsx/workers.py), which share it.

The transport is ``grpc_core.CoreServer`` (or, on a grpcio release it was not built for,
``grpc_aio.AioServer``: grpc_transport.py): ModelInfer is answered on its polling thread when a
quick model or graph can answer at once, everything else on the event loop. Beside KServe it
serves the standard health service (grpc_health.py) and server reflection (grpc_reflection.py).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from google.protobuf.message import DecodeError

from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.grpc_health import HealthService
from ovmsx.frontend.grpc_methods import AbortCall, Method, on_loop
from ovmsx.frontend.grpc_reflection import SERVICES as REFLECTION_SERVICES
from ovmsx.frontend.grpc_reflection import reflection_methods
from ovmsx.frontend.grpc_status import grpc_code, status_message
from ovmsx.frontend.grpc_transport import GrpcServer, create_transport
from ovmsx.frontend.kserve_decode_errors import explain
from ovmsx.frontend.kserve_service import SERVICE, KServeService
from ovmsx.frontend.memory_budget import MemoryBudget
from ovmsx.status import StatusError

log = logging.getLogger("ovmsx.frontend")

GIB = 1 << 30
INVALID_ARGUMENT = 3

SERVER_OPTIONS: list[tuple[str, int | str]] = [
    ("grpc.max_send_message_length", GIB),
    ("grpc.max_receive_message_length", GIB),
    ("grpc.so_reuseport", 0),
]


def _messages(handler: Callable[..., Awaitable], request_type) -> Method:
    """A small RPC taking and returning protobuf messages, answered on the loop."""

    async def handle(message: bytes, context) -> bytes:
        try:
            request = request_type.FromString(message)
        except DecodeError as error:
            failure = explain(message, request_type.DESCRIPTOR) or str(error)
            raise AbortCall(
                INVALID_ARGUMENT, f"request is not a valid {request_type.__name__}: {failure}"
            ) from None
        response = await handler(request, context)
        return response.SerializeToString()

    return Method(unary=on_loop(handle))


def _model_infer(service: KServeService) -> Method:
    def handle(message: bytes):
        try:
            return service.model_infer_now(message)
        except StatusError as error:
            raise AbortCall(grpc_code(error).value[0], status_message(error)) from None

    return Method(unary=handle)


def kserve_methods(service: KServeService) -> dict[str, Method]:
    methods = {
        "ServerLive": _messages(service.ServerLive, pb.ServerLiveRequest),
        "ServerReady": _messages(service.ServerReady, pb.ServerReadyRequest),
        "ServerMetadata": _messages(service.ServerMetadata, pb.ServerMetadataRequest),
        "ModelReady": _messages(service.ModelReady, pb.ModelReadyRequest),
        "ModelMetadata": _messages(service.ModelMetadata, pb.ModelMetadataRequest),
        "ModelInfer": _model_infer(service),
        # Both directions are bytes: kserve_codec encodes the answers itself.
        "ModelStreamInfer": Method(stream=service.ModelStreamInfer),
    }
    return {f"/{SERVICE}/{name}": method for name, method in methods.items()}


def served_methods(service: KServeService, health: HealthService | None) -> dict[str, Method]:
    """KServe, and with ``health`` the health service; reflection lists all of them."""
    methods = kserve_methods(service)
    if health is not None:
        methods |= health.methods()
    services = {path.split("/")[1] for path in methods}
    methods |= reflection_methods(services)
    if health is not None:
        health.add_server_names(services | set(REFLECTION_SERVICES))
    return methods


def create_server(
    service: KServeService,
    addresses: Sequence[str],
    port: int,
    channel_arguments: Sequence[tuple[str, int | str]] = (),
    reuse_port: bool = False,
    health: HealthService | None = None,
    budget: MemoryBudget | None = None,
) -> tuple[GrpcServer, int]:
    """A server bound on every address; returns it and the bound port (useful with port 0)."""
    # One entry per key: gRPC keeps the first of duplicate arguments, so a list with ours first
    # would silently ignore the user's. Port sharing stays ovmsx's to decide (--grpc_workers).
    merged = dict(SERVER_OPTIONS) | dict(channel_arguments) | {"grpc.so_reuseport": int(reuse_port)}
    options = list(merged.items())
    methods = served_methods(service, health)
    log.debug("gRPC methods: %s", ", ".join(sorted(methods)))
    server = create_transport(methods, options, budget)
    bound = 0
    for address in addresses:
        host = f"[{address}]" if ":" in address else address
        bound = server.add_insecure_port(f"{host}:{port}")
        port = bound  # with port 0, every address shares the first one's port
        log.info("Binding gRPC server to address: %s:%d", host, bound)
    return server, bound
