"""gRPC server reflection (OVMS has none), so that ``grpcurl -plaintext host:port list`` and
``describe`` work, and so do other tools that learn the API from the server.

Both versions of the reflection service are served: ``grpc.reflection.v1`` (what current tools
ask first) and ``grpc.reflection.v1alpha`` (what older ones ask, and grpcio's own client). The
answers come from grpcio-reflection's servicer, driven over ovmsx's transport; it looks files
and symbols up in a descriptor pool of ovmsx's own, holding exactly the services served: the
KServe proto (kept out of protobuf's default pool, see protos/generate.py), health and
reflection.

grpcio-reflection ships only the v1alpha proto. The v1 proto is the same file under another
package (same messages, same field numbers), so v1 is served from a copy of the v1alpha
descriptor renamed to ``grpc.reflection.v1`` and the same handler, which decodes both alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.reflection import aio as reflection_aio

from ovmsx.frontend import grpc_predict_v2_pb2
from ovmsx.frontend.grpc_core import AbortCall, Method

V1ALPHA = "grpc.reflection.v1alpha"
V1 = "grpc.reflection.v1"
SERVICES = (f"{V1}.ServerReflection", f"{V1ALPHA}.ServerReflection")
_V1_FILE = "grpc/reflection/v1/reflection.proto"
INVALID_ARGUMENT = 3


def _file_proto(file: FileDescriptor) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    return proto


def _v1_file() -> descriptor_pb2.FileDescriptorProto:
    """The v1alpha reflection file, renamed to the v1 package."""
    proto = _file_proto(reflection_pb2.DESCRIPTOR)
    proto.name = _V1_FILE
    proto.package = V1
    old, new = f".{V1ALPHA}.", f".{V1}."
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = new + field.type_name[len(old) :]
    for service in proto.service:
        for method in service.method:
            method.input_type = new + method.input_type[len(old) :]
            method.output_type = new + method.output_type[len(old) :]
    return proto


def _pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for file in (grpc_predict_v2_pb2.DESCRIPTOR, health_pb2.DESCRIPTOR, reflection_pb2.DESCRIPTOR):
        pool.Add(_file_proto(file))
    pool.Add(_v1_file())
    return pool


def reflection_methods(services: Iterable[str]) -> dict[str, Method]:
    """The reflection RPCs (both versions), listing ``services`` and reflection itself."""
    servicer = reflection_aio.ReflectionServicer((*services, *SERVICES), pool=_pool())

    async def handle(messages: AsyncIterator[bytes], context) -> AsyncIterator[bytes]:
        async for response in servicer.ServerReflectionInfo(_requests(messages), context):
            yield response.SerializeToString()

    method = Method(stream=handle)
    return {f"/{service}/ServerReflectionInfo": method for service in SERVICES}


async def _requests(
    messages: AsyncIterator[bytes],
) -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
    async for message in messages:
        try:
            yield reflection_pb2.ServerReflectionRequest.FromString(message)
        except DecodeError as error:
            raise AbortCall(
                INVALID_ARGUMENT, f"request is not a valid ServerReflectionRequest: {error}"
            ) from None
