"""gRPC server reflection (OVMS has none), so that ``grpcurl -plaintext host:port list`` and
``describe`` work, and so do other tools that learn the API from the server.

Both versions of the reflection service are served: ``grpc.reflection.v1`` (what current tools
ask first) and ``grpc.reflection.v1alpha`` (what older ones ask, and grpcio's own client). The
v1 proto is the v1alpha file under another package (same messages, same field numbers), so one
handler decodes both, and v1 describes itself from a copy of the v1alpha descriptor renamed to
``grpc.reflection.v1``.

Files and symbols are looked up in a descriptor pool holding exactly the services served: the
KServe proto, health and reflection. The answers follow the reflection protocol
(github.com/grpc/grpc/blob/master/doc/server-reflection.md): a file comes with every file it
imports, a name nothing defines is an ``error_response`` with NOT_FOUND, and the stream goes on.
ovmsx answers with its own handler rather than grpcio-reflection's servicer because that
package's generated module refuses protobuf runtimes outside its own range (protos/generate.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import DecodeError

from ovmsx.frontend import grpc_predict_v2_pb2, health_pb2, reflection_pb2
from ovmsx.frontend.grpc_methods import AbortCall, Method

V1ALPHA = "grpc.reflection.v1alpha"
V1 = "grpc.reflection.v1"
SERVICES = (f"{V1}.ServerReflection", f"{V1ALPHA}.ServerReflection")
_V1_FILE = "grpc/reflection/v1/reflection.proto"
INVALID_ARGUMENT = 3
NOT_FOUND = 5

Request = reflection_pb2.ServerReflectionRequest
Response = reflection_pb2.ServerReflectionResponse


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


class Reflection:
    """Answers reflection requests about ``services`` from ``pool``."""

    def __init__(self, services: Iterable[str], pool: descriptor_pool.DescriptorPool) -> None:
        self._services = sorted(services)
        self._pool = pool
        self._serialized: dict[str, bytes] = {}  # file name -> FileDescriptorProto bytes

    def answer(self, request: Request) -> Response:
        response = Response(valid_host=request.host, original_request=request)
        question = request.WhichOneof("message_request")
        try:
            if question == "list_services":
                listed = response.list_services_response.service
                listed.extend(reflection_pb2.ServiceResponse(name=n) for n in self._services)
            elif question == "file_by_filename":
                self._send_file(response, self._pool.FindFileByName(request.file_by_filename))
            elif question == "file_containing_symbol":
                symbol = request.file_containing_symbol
                self._send_file(response, self._pool.FindFileContainingSymbol(symbol))
            elif question == "file_containing_extension":
                asked = request.file_containing_extension
                message = self._pool.FindMessageTypeByName(asked.containing_type)
                extension = self._pool.FindExtensionByNumber(message, asked.extension_number)
                self._send_file(response, extension.file)
            elif question == "all_extension_numbers_of_type":
                message = self._pool.FindMessageTypeByName(request.all_extension_numbers_of_type)
                numbers = response.all_extension_numbers_response
                numbers.base_type_name = message.full_name
                numbers.extension_number.extend(
                    sorted(e.number for e in self._pool.FindAllExtensions(message))
                )
            else:
                _error(response, INVALID_ARGUMENT, "the request asks no question")
        except KeyError:
            _error(response, NOT_FOUND, f"{_subject(request, question)} is not served here")
        return response

    def _send_file(self, response: Response, file: FileDescriptor) -> None:
        """The file and, after it, every file it imports (directly or not), each once."""
        files = response.file_descriptor_response.file_descriptor_proto
        seen: set[str] = set()
        pending = [file]
        while pending:
            current = pending.pop(0)
            if current.name in seen:
                continue
            seen.add(current.name)
            if current.name not in self._serialized:  # the pool never changes: once each
                self._serialized[current.name] = _file_proto(current).SerializeToString()
            files.append(self._serialized[current.name])
            pending.extend(current.dependencies)


def _subject(request: Request, question: str) -> str:
    if question == "file_containing_extension":
        asked = request.file_containing_extension
        return f"extension {asked.extension_number} of {asked.containing_type!r}"
    return repr(getattr(request, question))


def _error(response: Response, code: int, message: str) -> None:
    response.error_response.error_code = code
    response.error_response.error_message = message


def reflection_methods(services: Iterable[str]) -> dict[str, Method]:
    """The reflection RPCs (both versions), listing ``services`` and reflection itself."""
    reflection = Reflection((*services, *SERVICES), _pool())

    async def handle(messages: AsyncIterator[bytes], context) -> AsyncIterator[bytes]:
        async for message in messages:
            yield reflection.answer(_request(message)).SerializeToString()

    method = Method(stream=handle)
    return {f"/{service}/ServerReflectionInfo": method for service in SERVICES}


def _request(message: bytes) -> Request:
    try:
        return Request.FromString(message)
    except DecodeError as error:
        raise AbortCall(
            INVALID_ARGUMENT, f"request is not a valid ServerReflectionRequest: {error}"
        ) from None
