"""The KServe v2 ``inference.GRPCInferenceService``: one thin method per RPC.

ModelInfer and ModelStreamInfer take and return serialized bytes (see kserve_codec.py); the
other RPCs are small and use protobuf messages as they are.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from time import perf_counter

from ovmsx import __version__, _core
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.grpc_status import abort, status_message
from ovmsx.frontend.kserve_codec import (
    decode_infer_request,
    encode_infer_response,
    encode_stream_error,
    wrap_stream_response,
)
from ovmsx.frontend.kserve_direct import direct_target
from ovmsx.frontend.kserve_graph import (
    GraphStream,
    infer_graph,
    infer_graph_now,
    infer_raw_graph_now,
    raw_graph_inputs,
)
from ovmsx.frontend.kserve_metadata import graph_metadata, model_metadata, pipeline_metadata
from ovmsx.frontend.request_observer import GRAPH, MODEL, PIPELINE, RequestObserver
from ovmsx.metrics.families import (
    GRPC,
    MODEL_INFER,
    MODEL_INFER_STREAM,
    MODEL_METADATA,
    MODEL_READY,
)
from ovmsx.metrics.inference_meter import DAG_INTERFACE
from ovmsx.quoting import quote
from ovmsx.servables.infer_request import InferRequest
from ovmsx.servables.model_version import ModelVersion
from ovmsx.servables.pipeline import Pipeline
from ovmsx.servables.registry import ServableRegistry
from ovmsx.status import StatusCode, StatusError, status_error

log = logging.getLogger("ovmsx.frontend")

SERVICE = "inference.GRPCInferenceService"
# ServerMetadataResponse.name as OVMS reports it, for clients that check it.
SERVER_NAME = "OpenVINO Model Server"


class KServeService:
    def __init__(self, registry: ServableRegistry, observer: RequestObserver | None = None) -> None:
        self._registry = registry
        self._observer = observer or RequestObserver(registry, None)
        # Successful calls are timed and reported only when something needs them (metrics, the
        # DEBUG log); failures always are. A pipeline's model calls count when metrics are on.
        self._timed = self._observer if self._observer.timing else None
        self._counting = self._observer.counting

    async def ServerLive(self, request: pb.ServerLiveRequest, context) -> pb.ServerLiveResponse:
        return pb.ServerLiveResponse(live=True)

    async def ServerReady(self, request: pb.ServerReadyRequest, context) -> pb.ServerReadyResponse:
        return pb.ServerReadyResponse(ready=self._registry.initial_load_done)

    async def ServerMetadata(self, request, context) -> pb.ServerMetadataResponse:
        return pb.ServerMetadataResponse(name=SERVER_NAME, version=__version__)

    async def ModelReady(self, request: pb.ModelReadyRequest, context) -> pb.ModelReadyResponse:
        start = perf_counter()
        try:
            kind, ready = self._ready(request)
        except StatusError as error:
            self._failed(MODEL_READY, request.name, request.version, error)
            await abort(context, error)
        if self._timed is not None:
            seconds = perf_counter() - start
            self._timed.finished(
                GRPC, MODEL_READY, request.name, request.version, kind, True, seconds
            )
        return pb.ModelReadyResponse(ready=ready)

    def _ready(self, request: pb.ModelReadyRequest) -> tuple[str, bool]:
        graph = self._registry.graphs.get(request.name)
        if graph is not None:
            graph.check_version(request.version)
            return GRAPH, graph.available
        pipeline = self._registry.pipelines.get(request.name)
        if pipeline is not None:
            pipeline.check_version(request.version)
            return PIPELINE, pipeline.available
        return MODEL, self._registry.version(request.name, request.version).available

    async def ModelMetadata(self, request: pb.ModelMetadataRequest, context):
        start = perf_counter()
        try:
            kind, response = self._metadata(request)
        except StatusError as error:
            self._failed(MODEL_METADATA, request.name, request.version, error)
            await abort(context, error)
        if self._timed is not None:
            seconds = perf_counter() - start
            name, version = request.name, request.version
            self._timed.finished(GRPC, MODEL_METADATA, name, version, kind, True, seconds)
        return response

    def _metadata(self, request: pb.ModelMetadataRequest) -> tuple[str, pb.ModelMetadataResponse]:
        graph = self._registry.graphs.get(request.name)
        if graph is not None:
            return GRAPH, graph_metadata(graph, request.version)
        pipeline = self._registry.pipelines.get(request.name)
        if pipeline is not None:
            return PIPELINE, pipeline_metadata(pipeline, request.version)
        return MODEL, model_metadata(self._registry, request.name, request.version)

    def model_infer_now(self, message: bytes) -> bytes | Callable[..., Awaitable[bytes]]:
        """ModelInfer on the gRPC server's polling thread: the answer, when a quick model or
        graph can give it right away (no hop to another thread); otherwise the coroutine
        function, taking the call's context, that answers on the event loop."""
        dispatcher = self._registry.dispatcher
        dispatcher.requests_polled += 1
        start = perf_counter() if self._timed is not None else 0.0
        request = None
        read = None  # the request as the core read it, for a graph
        try:
            target = direct_target(self._registry, message)
            if target is not None and target.compiled is not None:
                if not target.compiled.runs_here():
                    return partial(self._respond_later, message, target, start)
                direct = target.compiled.answer(message)  # timed when metrics are on
                if direct is not None:
                    if self._timed is not None:
                        self._answered(target.model_name, str(target.version), MODEL, start)
                    return direct
            elif target is None and self._registry.graphs:
                read = _core.read_raw_inputs(message)
                direct = None if read is None else self._graph_now(read, start)
                if direct is not None:
                    return direct
            request = decode_infer_request(message)
            answer = self._answer_now(request, start)
        except StatusError as error:
            self._infer_failed(request, error, read)
            raise
        except Exception as error:
            bug = _bug(error)
            self._infer_failed(request, bug, read)
            raise bug from None
        finally:
            dispatcher.requests_polled -= 1
        return answer if answer is not None else partial(self._answer_later, request, start)

    def _graph_now(self, read: tuple, start: float) -> bytes | None:
        """A graph's answer to a plain request of raw Python tensors that the core read
        (``_core.read_raw_inputs``); None when the general path must take it."""
        name, version, request_id, tensors = read
        graph = self._registry.graphs.get(name)
        inputs = None if graph is None else raw_graph_inputs(graph, tensors)
        if inputs is None:
            return None
        call = self._observer.graph_call(GRPC, MODEL_INFER, name) if self._counting else None
        answer = infer_raw_graph_now(graph, version, request_id, inputs, call)
        self._answered(name, "1", GRAPH, start)
        return answer

    def _answer_now(self, request: InferRequest, start: float) -> bytes | None:
        registry = self._registry
        name = request.servable_name
        graph = registry.graphs.get(name)
        if graph is not None:
            call = self._observer.graph_call(GRPC, MODEL_INFER, name) if self._counting else None
            answer = infer_graph_now(graph, request, call)
            if answer is not None:
                self._answered(name, "1", GRAPH, start)
            return answer
        pipeline = registry.pipelines.get(name)
        if pipeline is not None:
            return self._pipeline_now(pipeline, request, start)
        result = registry.infer_now(request)
        if result is None:
            return None
        answer = encode_infer_response(result, request.id)
        if self._timed is not None:
            self._answered(name, str(result.version), MODEL, start)
        return answer

    def _pipeline_now(
        self, pipeline: Pipeline, request: InferRequest, start: float
    ) -> bytes | None:
        if self._counting:  # its model calls count on the models' ModelInfer over gRPC
            token = DAG_INTERFACE.set(GRPC)
            try:
                result = self._registry.infer_pipeline_now(pipeline, request)
            finally:
                DAG_INTERFACE.reset(token)
        else:
            result = self._registry.infer_pipeline_now(pipeline, request)
        if result is None:
            return None
        answer = encode_infer_response(result, request.id)
        self._answered(request.servable_name, "1", PIPELINE, start)
        return answer

    def _answered(self, name: str, version: str, kind: str, start: float) -> None:
        """A unary ModelInfer succeeded (reported when metrics or the DEBUG log want it)."""
        if self._timed is not None:
            seconds = perf_counter() - start
            self._timed.finished(GRPC, MODEL_INFER, name, version, kind, True, seconds)

    async def _respond_later(
        self, message: bytes, target: ModelVersion, start: float, context
    ) -> bytes:
        """A model's answer inferred on OpenVINO's thread straight into the response, without
        Python per request; a request that is not a plain one takes the general path."""
        assert target.compiled is not None  # direct_target only returns available versions
        dispatcher = self._registry.dispatcher
        version = str(target.version)
        try:
            dispatcher.requests_on_loop += 1
            try:
                response = await target.compiled.respond(message, dispatcher)
            finally:
                dispatcher.requests_on_loop -= 1
            if response is None:
                response, _, version = await self._infer(
                    decode_infer_request(message), counted=True
                )
        except StatusError as error:
            # Reported with the name and version as the client wrote them (the version may be
            # ""), read without decoding the request a second time.
            name, version_text = _core.infer_target(message) or ("", "")
            self._failed(MODEL_INFER, name, version_text, error)
            await abort(context, error)
        self._answered(target.model_name, version, MODEL, start)
        return response

    async def _answer_later(self, request: InferRequest, start: float, context) -> bytes:
        try:
            answer, kind, version = await self._infer(request, counted=True)
        except StatusError as error:
            self._infer_failed(request, error)
            await abort(context, error)
        self._answered(request.servable_name, version, kind, start)
        return answer

    async def _infer(self, request: InferRequest, counted: bool) -> tuple[bytes, str, str]:
        """The answer, the kind of servable and the version that gave it. ``counted``: the call
        is a unary ModelInfer, which metrics count (a model's answers to a stream are not)."""
        dispatcher = self._registry.dispatcher
        dispatcher.requests_on_loop += 1
        name = request.servable_name
        try:
            graph = self._registry.graphs.get(name)
            if graph is not None:
                counting = counted and self._counting
                call = self._observer.graph_call(GRPC, MODEL_INFER, name) if counting else None
                answer = await infer_graph(graph, request, self._registry.graph_workers, call)
                return answer, GRAPH, "1"
            pipeline = self._registry.pipelines.get(name)
            if pipeline is not None:
                token = DAG_INTERFACE.set(GRPC if counted and self._counting else None)
                try:
                    result = await self._registry.infer_pipeline(pipeline, request)
                finally:
                    DAG_INTERFACE.reset(token)
                return encode_infer_response(result, request.id), PIPELINE, "1"
            result = await self._registry.infer(request)
            return encode_infer_response(result, request.id), MODEL, str(result.version)
        except StatusError:
            raise
        except Exception as error:
            raise _bug(error) from None
        finally:
            dispatcher.requests_on_loop -= 1

    def _failed(self, method: str, name: str, version: str, error: StatusError) -> None:
        self._observer.failed(GRPC, method, name, version, error)

    def _infer_failed(
        self, request: InferRequest | None, error: StatusError, read: tuple | None = None
    ) -> None:
        """A failed ModelInfer, named by ``request`` or else by the core's ``read`` of it."""
        if request is None and read is not None:
            self._failed(MODEL_INFER, read[0], read[1], error)
        elif request is None:  # not even readable
            self._observer.finished(GRPC, MODEL_INFER, "", None, None, False, 0.0, error)
        else:
            self._failed(MODEL_INFER, request.servable_name, request.version, error)

    async def ModelStreamInfer(
        self, messages: AsyncIterator[bytes], context
    ) -> AsyncIterator[bytes]:
        """A graph keeps one instance for the whole stream; a model answers each request.

        No request is kept longer than it takes to answer it: a stream may idle for long, and
        every message may be large.
        """
        first = await anext(messages, None)
        if first is None:
            return
        try:
            request = decode_infer_request(first)
        except StatusError as error:
            self._observer.finished(GRPC, MODEL_INFER_STREAM, "", None, None, False, 0.0, error)
            await abort(context, error)
        del first  # ``request`` holds what is needed
        name = request.servable_name
        graph = self._registry.graphs.get(name)
        if graph is None:
            known = (self._registry.models, self._registry.pipelines)
            if not any(name in names for names in known):
                # As OVMS: a stream whose first request names nothing ends with NOT_FOUND.
                missing = status_error(StatusCode.MODEL_NAME_MISSING, quote(name))
                self._failed(MODEL_INFER_STREAM, name, request.version, missing)
                await abort(context, missing)
            reply = await self._stream_answer(request)
            del request
            yield reply
            async for message in messages:
                reply = await self._stream_reply(message)
                del message
                yield reply
            return
        version = request.version
        try:
            stream = GraphStream(graph, request, self._registry.graph_workers, self._observer)
        except StatusError as error:
            self._failed(MODEL_INFER_STREAM, name, version, error)
            await abort(context, error)
        del request
        async for response in stream.responses(messages):
            if isinstance(response, StatusError):
                self._failed(MODEL_INFER_STREAM, name, version, response)
                await abort(context, response)
            yield response

    async def _stream_reply(self, message: bytes) -> bytes:
        """A model's answer to one streamed request, or its error as a stream reply."""
        try:
            request = decode_infer_request(message)
        except StatusError as error:
            return encode_stream_error(status_message(error))
        return await self._stream_answer(request)

    async def _stream_answer(self, request: InferRequest) -> bytes:
        try:
            answer, _, _ = await self._infer(request, counted=False)
            return wrap_stream_response(answer)
        except StatusError as error:
            return encode_stream_error(status_message(error), request.id, request.servable_name)


def _bug(error: Exception) -> StatusError:
    """A failure no check foresaw: logged with its traceback and answered as INTERNAL, and the
    server keeps serving. (Raised ``from None``: the error's frames hold the request.)"""
    log.exception("ModelInfer failed")
    return status_error(StatusCode.INTERNAL_ERROR, repr(error))
