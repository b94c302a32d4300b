"""A bare KServe v2 gRPC server that answers ModelInfer by echoing the request.

It is the ceiling for ovmsx's gRPC path: the same grpc.aio stack and message classes, with no
model behind them. ModelInfer returns one output per input (same name, datatype and shape) and
the request's raw_input_contents as raw_output_contents; every model is live and ready, and
ModelMetadata describes the inputs given on the command line, whatever model name is asked.

    python bench/echo_server.py --port 9000 --input INPUT:FP32:1,10

Written the plain way one would write such a server in Python (async handlers, generated
message classes), so that ovmsx/echo measures what the server adds and nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Sequence

import grpc
from infer_request_gen import InputSpec

# ovmsx's own service name, transport settings (1 GiB message limits as OVMS, no
# SO_REUSEPORT) and malloc thresholds, so that the two servers differ only in what they do
# with a request.
from ovmsx import _core
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.grpc_server import SERVER_OPTIONS
from ovmsx.frontend.kserve_service import SERVICE
from ovmsx.server import MMAP_THRESHOLD, TRIM_THRESHOLD


class EchoService:
    """The KServe v2 RPCs; ``inputs`` is what ModelMetadata reports for any model."""

    def __init__(self, inputs: Sequence[InputSpec]) -> None:
        self.inputs = list(inputs)

    async def server_live(self, request: pb.ServerLiveRequest, context) -> pb.ServerLiveResponse:
        return pb.ServerLiveResponse(live=True)

    async def server_ready(self, request, context) -> pb.ServerReadyResponse:
        return pb.ServerReadyResponse(ready=True)

    async def model_ready(self, request, context) -> pb.ModelReadyResponse:
        return pb.ModelReadyResponse(ready=True)

    async def server_metadata(self, request, context) -> pb.ServerMetadataResponse:
        return pb.ServerMetadataResponse(name="ovmsx bench echo server", version="1")

    async def model_metadata(
        self, request: pb.ModelMetadataRequest, context
    ) -> pb.ModelMetadataResponse:
        response = pb.ModelMetadataResponse(name=request.name, versions=["1"], platform="echo")
        for spec in self.inputs:
            for tensors in (response.inputs, response.outputs):
                tensors.add(name=spec.name, datatype=spec.datatype, shape=spec.shape)
        return response

    async def model_infer(self, request: pb.ModelInferRequest, context) -> pb.ModelInferResponse:
        return echo(request)

    async def model_stream_infer(
        self, requests: AsyncIterator[pb.ModelInferRequest], context
    ) -> AsyncIterator[pb.ModelStreamInferResponse]:
        async for request in requests:
            yield pb.ModelStreamInferResponse(infer_response=echo(request))


def echo(request: pb.ModelInferRequest) -> pb.ModelInferResponse:
    response = pb.ModelInferResponse(
        model_name=request.model_name, model_version=request.model_version or "1", id=request.id
    )
    for tensor in request.inputs:
        out = response.outputs.add(name=tensor.name, datatype=tensor.datatype, shape=tensor.shape)
        if tensor.HasField("contents"):
            out.contents.CopyFrom(tensor.contents)
    response.raw_output_contents.extend(request.raw_input_contents)
    return response


def handlers(service: EchoService) -> grpc.GenericRpcHandler:
    def unary(method, request_type, response_type) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(
            method,
            request_deserializer=request_type.FromString,
            response_serializer=response_type.SerializeToString,
        )

    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "ServerLive": unary(service.server_live, pb.ServerLiveRequest, pb.ServerLiveResponse),
            "ServerReady": unary(
                service.server_ready, pb.ServerReadyRequest, pb.ServerReadyResponse
            ),
            "ModelReady": unary(service.model_ready, pb.ModelReadyRequest, pb.ModelReadyResponse),
            "ServerMetadata": unary(
                service.server_metadata, pb.ServerMetadataRequest, pb.ServerMetadataResponse
            ),
            "ModelMetadata": unary(
                service.model_metadata, pb.ModelMetadataRequest, pb.ModelMetadataResponse
            ),
            "ModelInfer": unary(service.model_infer, pb.ModelInferRequest, pb.ModelInferResponse),
            "ModelStreamInfer": grpc.stream_stream_rpc_method_handler(
                service.model_stream_infer,
                request_deserializer=pb.ModelInferRequest.FromString,
                response_serializer=pb.ModelStreamInferResponse.SerializeToString,
            ),
        },
    )


async def serve(address: str, inputs: Sequence[InputSpec]) -> None:
    _core.tune_allocator(MMAP_THRESHOLD, TRIM_THRESHOLD)
    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_generic_rpc_handlers((handlers(EchoService(inputs)),))
    if server.add_insecure_port(address) == 0:
        raise SystemExit(f"echo server: cannot bind {address}")
    await server.start()
    print(f"echo server listening on {address}", flush=True)
    await server.wait_for_termination()


async def serve_on_core(address: str, inputs: Sequence[InputSpec]) -> None:
    """The same echo on ovmsx's own transport (ovmsx/frontend/grpc_core.py): ModelInfer
    answered on the polling thread, the other RPCs on the event loop."""
    from ovmsx.frontend.grpc_core import CoreServer
    from ovmsx.frontend.grpc_methods import Method, on_loop

    service = EchoService(inputs)

    def messages(handler, request_type) -> Method:
        async def handle(message: bytes, context) -> bytes:
            response = await handler(request_type.FromString(message), context)
            return response.SerializeToString()

        return Method(unary=on_loop(handle))

    def infer(message: bytes) -> bytes:
        return echo(pb.ModelInferRequest.FromString(message)).SerializeToString()

    async def stream(requests, context):
        async for message in requests:
            answer = echo(pb.ModelInferRequest.FromString(message))
            yield pb.ModelStreamInferResponse(infer_response=answer).SerializeToString()

    methods = {
        "ServerLive": messages(service.server_live, pb.ServerLiveRequest),
        "ServerReady": messages(service.server_ready, pb.ServerReadyRequest),
        "ModelReady": messages(service.model_ready, pb.ModelReadyRequest),
        "ServerMetadata": messages(service.server_metadata, pb.ServerMetadataRequest),
        "ModelMetadata": messages(service.model_metadata, pb.ModelMetadataRequest),
        "ModelInfer": Method(unary=infer),
        "ModelStreamInfer": Method(stream=stream),
    }
    _core.tune_allocator(MMAP_THRESHOLD, TRIM_THRESHOLD)
    loop = asyncio.get_running_loop()
    server = CoreServer(
        {f"/{SERVICE}/{name}": method for name, method in methods.items()}, SERVER_OPTIONS, loop
    )
    server.add_insecure_port(address)
    await server.start()
    print(f"echo server (ovmsx transport) listening on {address}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--input",
        dest="inputs",
        type=InputSpec.parse,
        action="append",
        default=[],
        help="NAME:DATATYPE:D1,D2,... reported by ModelMetadata (repeatable)",
    )
    parser.add_argument(
        "--transport",
        choices=("aio", "core"),
        default="aio",
        help="grpc.aio (default), or ovmsx's own transport polling gRPC's completion queue",
    )
    args = parser.parse_args()
    run = serve if args.transport == "aio" else serve_on_core
    asyncio.run(run(f"{args.host}:{args.port}", args.inputs))


if __name__ == "__main__":
    main()
