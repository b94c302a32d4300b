"""The KServe v2 REST API, independent of the HTTP library that carries it.

``RestApp.handle`` takes a request's method, raw path, ``Inference-Header-Content-Length``
header and body, and returns a ``RestResponse``; the HTTP server (rest_server.py) only moves
bytes. Every failure becomes OVMS's ``{"error": "<message>"}`` with its HTTP code, and a bug is
logged and answered 500: the server keeps serving whatever a request holds.

The servable calls (infer, model metadata, model ready) each end in ``_observed``, the one
place where their outcome, servable, version, kind and time are all known, which reports them
to the context's observer (metrics and per-request logs).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from importlib import resources
from time import perf_counter

from ovmsx.frontend.request_observer import GRAPH, MODEL, PIPELINE
from ovmsx.frontend.rest_context import RestContext
from ovmsx.frontend.rest_infer import infer
from ovmsx.frontend.rest_metadata import servable_metadata, server_metadata
from ovmsx.frontend.rest_outputs import encode_response
from ovmsx.frontend.rest_request import decode_request
from ovmsx.frontend.rest_response import (
    EMPTY_OK,
    JSON,
    JSON_UTF8,
    RestResponse,
    error_response,
    json_response,
)
from ovmsx.frontend.rest_routes import Endpoint, Route, is_metrics_path, route
from ovmsx.metrics.families import MODEL_INFER, MODEL_METADATA, MODEL_READY, REST
from ovmsx.status import StatusCode, StatusError, status_error

log = logging.getLogger("ovmsx.frontend")

# OVMS serves /metrics as text, its errors included.
_METRICS_ERROR_TYPE = "text/plain"
# Metrics are off by default; OVMS's 400 alone does not say how to turn them on.
METRICS_OFF_HINT = (
    "metrics are off: start ovmsx with --metrics_enable (or the config's monitoring section)"
)

# A servable call's answer, the kind of servable that gave it and the version that answered.
Served = tuple[RestResponse, str, str]


class RestApp:
    def __init__(self, context: RestContext) -> None:
        self._context = context
        self._registry = context.registry
        self._openapi: bytes | None = None
        self._handlers: dict[Endpoint, Callable[[Route, str | None, bytes], Awaitable]] = {
            Endpoint.SERVER_METADATA: self._server_metadata,
            Endpoint.SERVER_LIVE: self._live,
            Endpoint.SERVER_READY: self._ready,
            Endpoint.MODEL_METADATA: self._model_metadata,
            Endpoint.MODEL_READY: self._model_ready,
            Endpoint.MODEL_INFER: self._infer,
            Endpoint.METRICS: self._metrics,
            Endpoint.CONFIG_STATUS: self._config_status,
            Endpoint.CONFIG_RELOAD: self._config_reload,
            Endpoint.OPENAPI: self._openapi_document,
        }

    async def handle(
        self, method: str, path: str, header_length: str | None, body: bytes
    ) -> RestResponse:
        try:
            found = route(method, path)
            return await self._handlers[found.endpoint](found, header_length, body)
        except StatusError as error:
            response = error_response(error)
        except Exception as error:
            response = error_response(_bug(error, method, path))
        if is_metrics_path(path):
            response.content_type = _METRICS_ERROR_TYPE
        return response

    # -- server ----------------------------------------------------------------------------

    async def _server_metadata(self, found: Route, header: str | None, body: bytes):
        return json_response(server_metadata())

    async def _live(self, found: Route, header: str | None, body: bytes):
        # OVMS answers with an empty body; kserve's client reads {"live": true}.
        return json_response({"live": True})

    async def _ready(self, found: Route, header: str | None, body: bytes):
        if not self._registry.initial_load_done:
            raise status_error(StatusCode.SERVER_NOT_READY)
        return RestResponse(200, b'{"ready":true}', content_type=JSON_UTF8)

    async def _openapi_document(self, found: Route, header: str | None, body: bytes):
        if self._openapi is None:
            self._openapi = resources.files(__package__).joinpath("openapi.json").read_bytes()
        return RestResponse(200, self._openapi)

    # -- servables -------------------------------------------------------------------------

    async def _model_metadata(self, found: Route, header: str | None, body: bytes):
        async def served() -> Served:
            kind, document = servable_metadata(self._registry, found.name, found.version)
            return json_response(document), kind, found.version

        return await self._observed(MODEL_METADATA, found, served)

    async def _model_ready(self, found: Route, header: str | None, body: bytes):
        async def served() -> Served:
            kind, ready = self._readiness(found)
            if not ready:
                raise status_error(StatusCode.MODEL_VERSION_NOT_LOADED_YET, found.name)
            return EMPTY_OK, kind, found.version

        return await self._observed(MODEL_READY, found, served)

    def _readiness(self, found: Route) -> tuple[str, bool]:
        registry = self._registry
        graph = registry.graphs.get(found.name)
        if graph is not None:
            graph.check_version(found.version)
            return GRAPH, graph.available
        pipeline = registry.pipelines.get(found.name)
        if pipeline is not None:
            pipeline.check_version(found.version)
            return PIPELINE, pipeline.available
        return MODEL, registry.version(found.name, found.version).available

    async def _infer(self, found: Route, header: str | None, body: bytes):
        async def served() -> Served:
            request, form = decode_request(found.name, found.version, body, header)
            answer = await infer(self._registry, request, self._context.observer)
            response = encode_response(
                found.name, answer.version, request.id, answer.parameters, answer.outputs, form
            )
            return response, answer.kind, answer.version

        return await self._observed(MODEL_INFER, found, served)

    async def _observed(
        self, method: str, found: Route, served: Callable[[], Awaitable[Served]]
    ) -> RestResponse:
        """Run one servable call and report how it ended: the one place for each method."""
        start = perf_counter()
        try:
            response, kind, version = await served()
        except StatusError as error:
            self._failed(method, found, error)
            return error_response(error)
        except Exception as error:
            bug = _bug(error, method, found.name)
            self._failed(method, found, bug)
            return error_response(bug)
        observer = self._context.observer
        if observer is not None:
            seconds = perf_counter() - start
            observer.finished(REST, method, found.name, version, kind, True, seconds)
        return response

    def _failed(self, method: str, found: Route, error: StatusError) -> None:
        observer = self._context.observer
        if observer is not None:
            observer.failed(REST, method, found.name, found.version, error)

    # -- beside KServe ---------------------------------------------------------------------

    async def _metrics(self, found: Route, header: str | None, body: bytes):
        metrics = self._context.metrics
        if metrics is None:  # OVMS: disabled metrics are an unknown URL; the hint is ovmsx's
            raise status_error(StatusCode.REST_INVALID_URL, METRICS_OFF_HINT)
        text, content_type = metrics.exposition()
        return RestResponse(200, text, content_type=content_type)

    async def _config_status(self, found: Route, header: str | None, body: bytes):
        status, text = await self._config().status()
        return RestResponse(status, text, content_type=JSON)

    async def _config_reload(self, found: Route, header: str | None, body: bytes):
        status, text = await self._config().reload()
        return RestResponse(status, text, content_type=JSON)

    def _config(self):
        api = self._context.config_api
        if api is None:
            raise status_error(StatusCode.NOT_IMPLEMENTED, "the config API is not available")
        return api


def _bug(error: Exception, method: str, what: str) -> StatusError:
    """A failure no check foresaw: logged with its traceback, answered as INTERNAL."""
    log.exception("REST %s %s failed", method, what)
    return status_error(StatusCode.INTERNAL_ERROR, repr(error))
