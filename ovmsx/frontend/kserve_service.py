"""The KServe v2 ``inference.GRPCInferenceService``: one thin method per RPC.

ModelInfer and ModelStreamInfer take and return serialized bytes (see kserve_codec.py); the
other RPCs are small and use protobuf messages as they are.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial

from ovmsx import __version__
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.grpc_status import abort, status_message
from ovmsx.frontend.kserve_codec import (
    decode_infer_request,
    encode_infer_response,
    encode_stream_error,
    wrap_stream_response,
)
from ovmsx.frontend.kserve_direct import direct_target
from ovmsx.frontend.kserve_graph import GraphStream, infer_graph, infer_graph_now
from ovmsx.frontend.kserve_metadata import graph_metadata, model_metadata, pipeline_metadata
from ovmsx.quoting import quote
from ovmsx.servables.infer_request import InferRequest
from ovmsx.servables.model_loader import CompiledVersion
from ovmsx.servables.registry import ServableRegistry
from ovmsx.status import StatusCode, StatusError, status_error

log = logging.getLogger("ovmsx.frontend")

SERVICE = "inference.GRPCInferenceService"
# ServerMetadataResponse.name as OVMS reports it, for clients that check it.
SERVER_NAME = "OpenVINO Model Server"


class KServeService:
    def __init__(self, registry: ServableRegistry) -> None:
        self._registry = registry

    async def ServerLive(self, request: pb.ServerLiveRequest, context) -> pb.ServerLiveResponse:
        return pb.ServerLiveResponse(live=True)

    async def ServerReady(self, request: pb.ServerReadyRequest, context) -> pb.ServerReadyResponse:
        return pb.ServerReadyResponse(ready=self._registry.initial_load_done)

    async def ServerMetadata(self, request, context) -> pb.ServerMetadataResponse:
        return pb.ServerMetadataResponse(name=SERVER_NAME, version=__version__)

    async def ModelReady(self, request: pb.ModelReadyRequest, context) -> pb.ModelReadyResponse:
        try:
            graph = self._registry.graphs.get(request.name)
            if graph is not None:
                graph.check_version(request.version)
                return pb.ModelReadyResponse(ready=graph.available)
            pipeline = self._registry.pipelines.get(request.name)
            if pipeline is not None:
                pipeline.check_version(request.version)
                return pb.ModelReadyResponse(ready=pipeline.available)
            version = self._registry.version(request.name, request.version)
        except StatusError as error:
            await abort(context, error)
        return pb.ModelReadyResponse(ready=version.available)

    async def ModelMetadata(self, request: pb.ModelMetadataRequest, context):
        try:
            graph = self._registry.graphs.get(request.name)
            if graph is not None:
                return graph_metadata(graph, request.version)
            pipeline = self._registry.pipelines.get(request.name)
            if pipeline is not None:
                return pipeline_metadata(pipeline, request.version)
            return model_metadata(self._registry, request.name, request.version)
        except StatusError as error:
            await abort(context, error)

    def model_infer_now(self, message: bytes) -> bytes | Callable[..., Awaitable[bytes]]:
        """ModelInfer on the gRPC server's polling thread: the answer, when a quick model or
        graph can give it right away (no hop to another thread); otherwise the coroutine
        function, taking the call's context, that answers on the event loop."""
        dispatcher = self._registry.dispatcher
        dispatcher.requests_polled += 1
        try:
            compiled = direct_target(self._registry, message)
            if compiled is not None:
                if not compiled.runs_here():
                    return partial(self._respond_later, message, compiled)
                direct = compiled.direct.answer(message)
                if direct is not None:
                    return direct
            request = decode_infer_request(message)
            answer = self._answer_now(request)
        except StatusError:
            raise
        except Exception as error:
            raise _bug(error) from None
        finally:
            dispatcher.requests_polled -= 1
        return answer if answer is not None else partial(self._answer_later, request)

    def _answer_now(self, request: InferRequest) -> bytes | None:
        registry = self._registry
        name = request.servable_name
        graph = registry.graphs.get(name)
        if graph is not None:
            return infer_graph_now(graph, request)
        pipeline = registry.pipelines.get(name)
        if pipeline is not None:
            result = registry.infer_pipeline_now(pipeline, request)
        else:
            result = registry.infer_now(request)
        return None if result is None else encode_infer_response(result, request.id)

    async def _respond_later(self, message: bytes, compiled: CompiledVersion, context) -> bytes:
        """A model's answer inferred on OpenVINO's thread straight into the response, without
        Python per request; a request that is not a plain one takes the general path."""
        dispatcher = self._registry.dispatcher
        try:
            dispatcher.requests_on_loop += 1
            try:
                response = await dispatcher.respond(compiled.direct, message)
            finally:
                dispatcher.requests_on_loop -= 1
            if response is None:
                response = await self._infer_request(decode_infer_request(message))
        except StatusError as error:
            await abort(context, error)
        return response

    async def _answer_later(self, request: InferRequest, context) -> bytes:
        try:
            return await self._infer_request(request)
        except StatusError as error:
            await abort(context, error)

    async def _infer_request(self, request: InferRequest) -> bytes:
        dispatcher = self._registry.dispatcher
        dispatcher.requests_on_loop += 1
        try:
            graph = self._registry.graphs.get(request.servable_name)
            if graph is not None:
                return await infer_graph(graph, request, self._registry.graph_workers)
            pipeline = self._registry.pipelines.get(request.servable_name)
            if pipeline is not None:
                result = await self._registry.infer_pipeline(pipeline, request)
                return encode_infer_response(result, request.id)
            result = await self._registry.infer(request)
            return encode_infer_response(result, request.id)
        except StatusError:
            raise
        except Exception as error:
            raise _bug(error) from None
        finally:
            dispatcher.requests_on_loop -= 1

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
            await abort(context, error)
        del first  # ``request`` holds what is needed
        graph = self._registry.graphs.get(request.servable_name)
        if graph is None:
            known = (self._registry.models, self._registry.pipelines)
            if not any(request.servable_name in names for names in known):
                # As OVMS: a stream whose first request names nothing ends with NOT_FOUND.
                missing = status_error(StatusCode.MODEL_NAME_MISSING, quote(request.servable_name))
                await abort(context, missing)
            reply = await self._stream_answer(request)
            del request
            yield reply
            async for message in messages:
                reply = await self._stream_reply(message)
                del message
                yield reply
            return
        try:
            stream = GraphStream(graph, request, self._registry.graph_workers)
        except StatusError as error:
            await abort(context, error)
        del request
        async for response in stream.responses(messages):
            if isinstance(response, StatusError):
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
            return wrap_stream_response(await self._infer_request(request))
        except StatusError as error:
            return encode_stream_error(status_message(error), request.id, request.servable_name)


def _bug(error: Exception) -> StatusError:
    """A failure no check foresaw: logged with its traceback and answered as INTERNAL, and the
    server keeps serving. (Raised ``from None``: the error's frames hold the request.)"""
    log.exception("ModelInfer failed")
    return status_error(StatusCode.INTERNAL_ERROR, repr(error))
