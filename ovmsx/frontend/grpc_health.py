"""The standard gRPC health service, ``grpc.health.v1.Health`` (OVMS has none).

It lets Kubernetes' gRPC probes, grpc-health-probe and client-side health checking ask ovmsx
what its KServe ``ServerReady`` and ``ModelReady`` say, in the protocol they speak
(github.com/grpc/grpc/blob/master/doc/health-checking.md):

- service ``""`` (the whole server) and the names of the gRPC services ovmsx serves: SERVING
  once the initial load is done, NOT_SERVING before that and from the moment the server starts
  stopping;
- service = a model, pipeline or graph name: SERVING while it can answer (a model: at least one
  version AVAILABLE), NOT_SERVING otherwise, and NOT_SERVING for everything while stopping;
- any other name: ``Check`` fails with NOT_FOUND, ``Watch`` answers SERVICE_UNKNOWN (and keeps
  watching: a reload may add the name).

``Watch`` looks at the status every ``WATCH_POLL_SECONDS`` and sends it when it has changed;
stopping wakes every watcher at once, which sends NOT_SERVING and ends its stream (with OK), so
that open watches never hold up the server's drain.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable

from google.protobuf.message import DecodeError

from ovmsx.frontend import health_pb2
from ovmsx.frontend.grpc_methods import AbortCall, Method, on_loop
from ovmsx.log_format import TRACE
from ovmsx.servables.registry import ServableRegistry

log = logging.getLogger("ovmsx.frontend")

SERVICE = "grpc.health.v1.Health"
WATCH_POLL_SECONDS = 0.5

INVALID_ARGUMENT = 3
NOT_FOUND = 5

_Status = health_pb2.HealthCheckResponse.ServingStatus
SERVING = _Status.SERVING
NOT_SERVING = _Status.NOT_SERVING
SERVICE_UNKNOWN = _Status.SERVICE_UNKNOWN


class HealthService:
    """Answers Check and Watch from the registry's state; ``shut_down`` when stopping."""

    def __init__(self, registry: ServableRegistry) -> None:
        self._registry = registry
        # Names that stand for the whole server, as "" does.
        self._server_names = {"", SERVICE}
        self._stopping = asyncio.Event()

    def add_server_names(self, services: Iterable[str]) -> None:
        """The gRPC services served beside this one: each stands for the whole server."""
        self._server_names.update(services)

    def shut_down(self) -> None:
        """From now on everything is NOT_SERVING; open watches send that and end."""
        self._stopping.set()

    def status(self, service: str) -> int:
        """The ServingStatus of ``service``; SERVICE_UNKNOWN for a name nothing answers to."""
        if service in self._server_names:
            serving = self._registry.initial_load_done
        else:
            available = self._servable_available(service)
            if available is None:
                return SERVICE_UNKNOWN
            serving = available
        return SERVING if serving and not self._stopping.is_set() else NOT_SERVING

    def _servable_available(self, name: str) -> bool | None:
        registry = self._registry
        graph = registry.graphs.get(name)
        if graph is not None:
            return graph.available
        pipeline = registry.pipelines.get(name)
        if pipeline is not None:
            return pipeline.available
        model = registry.models.get(name)
        if model is not None:
            return bool(model.available_versions())
        return None

    async def check(self, message: bytes, context) -> bytes:
        service = _request(message).service
        status = self.status(service)
        # Probes ask every few seconds: a line each only when tracing.
        log.log(TRACE, "health Check of %r: %s", service, _Status.Name(status))
        if status == SERVICE_UNKNOWN:
            # The health-checking protocol's answer to a name the server does not know.
            raise AbortCall(NOT_FOUND, f"unknown service: {service!r}")
        return _response(status)

    async def watch(self, messages: AsyncIterator[bytes], context) -> AsyncIterator[bytes]:
        first = await anext(messages, None)
        if first is None:
            return
        service = _request(first).service
        sent = None
        while True:
            status = self.status(service)
            if status != sent:
                log.log(TRACE, "health Watch of %r: %s", service, _Status.Name(status))
                yield _response(status)
                sent = status
                continue  # the status may have changed (stopping, say) while it was sent
            if self._stopping.is_set():
                return
            with contextlib.suppress(asyncio.TimeoutError):  # time to look again
                await asyncio.wait_for(self._stopping.wait(), WATCH_POLL_SECONDS)

    def methods(self) -> dict[str, Method]:
        """Its RPCs for the transport (``grpc_core.CoreServer``), by path."""
        return {
            f"/{SERVICE}/Check": Method(unary=on_loop(self.check)),
            # Server streaming: one request, then a response at each change.
            f"/{SERVICE}/Watch": Method(stream=self.watch),
        }


def _request(message: bytes) -> health_pb2.HealthCheckRequest:
    try:
        return health_pb2.HealthCheckRequest.FromString(message)
    except DecodeError as error:
        raise AbortCall(
            INVALID_ARGUMENT, f"request is not a valid HealthCheckRequest: {error}"
        ) from None


def _response(status: int) -> bytes:
    return health_pb2.HealthCheckResponse(status=status).SerializeToString()
