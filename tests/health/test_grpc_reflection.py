"""gRPC server reflection on a real server: grpcio-reflection's own client
(``ProtoReflectionDescriptorDatabase``, v1alpha) and raw calls to the v1 service, which is
what grpcurl asks first."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from health_servers import servables_config
from serving_process import ServerProcess, served

SERVICES = [
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
    "inference.GRPCInferenceService",
]
KSERVE_RPCS = {
    "ServerLive",
    "ServerReady",
    "ServerMetadata",
    "ModelReady",
    "ModelMetadata",
    "ModelInfer",
    "ModelStreamInfer",
}
V1_INFO = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("reflection")
    with served(servables_config(root), root) as process:
        yield process


@pytest.fixture
def channel(server: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.url) as opened:
        yield opened


@pytest.fixture
def pool(channel: grpc.Channel) -> descriptor_pool.DescriptorPool:
    """Descriptors fetched from the server as they are asked for."""
    return descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))


def test_list_names_every_service(channel: grpc.Channel) -> None:
    assert sorted(ProtoReflectionDescriptorDatabase(channel).get_services()) == SERVICES


def test_describe_the_kserve_service(pool: descriptor_pool.DescriptorPool) -> None:
    service = pool.FindServiceByName("inference.GRPCInferenceService")
    assert {method.name for method in service.methods} == KSERVE_RPCS
    stream = service.methods_by_name["ModelStreamInfer"]
    assert stream.input_type.full_name == "inference.ModelInferRequest"
    assert stream.output_type.full_name == "inference.ModelStreamInferResponse"
    request = pool.FindMessageTypeByName("inference.ModelInferRequest")
    assert {"model_name", "inputs", "raw_input_contents"} <= set(request.fields_by_name)


def test_describe_health(pool: descriptor_pool.DescriptorPool) -> None:
    check = pool.FindServiceByName("grpc.health.v1.Health").methods_by_name["Check"]
    assert check.input_type.full_name == "grpc.health.v1.HealthCheckRequest"
    status = check.output_type.fields_by_name["status"].enum_type
    assert "SERVICE_UNKNOWN" in status.values_by_name


def test_reflected_types_are_enough_to_call_the_server(
    channel: grpc.Channel, pool: descriptor_pool.DescriptorPool
) -> None:
    """What grpcurl does: build a request from the reflected descriptors, call, decode."""
    method = pool.FindServiceByName("inference.GRPCInferenceService").methods_by_name["ModelReady"]
    request_type = message_factory.GetMessageClass(method.input_type)
    response_type = message_factory.GetMessageClass(method.output_type)
    call = channel.unary_unary(
        "/inference.GRPCInferenceService/ModelReady",
        request_serializer=request_type.SerializeToString,
        response_deserializer=response_type.FromString,
    )
    assert call(request_type(name="add_one"), timeout=10).ready is True


def test_an_unknown_symbol_is_not_found(pool: descriptor_pool.DescriptorPool) -> None:
    with pytest.raises(KeyError):
        pool.FindServiceByName("no.such.Service")


def _ask_v1(channel: grpc.Channel, *requests: reflection_pb2.ServerReflectionRequest):
    # v1 and v1alpha messages are the same on the wire (same fields, same numbers).
    call = channel.stream_stream(
        V1_INFO,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    return list(call(iter(requests), timeout=10))


def test_v1_lists_the_services(channel: grpc.Channel) -> None:
    (answer,) = _ask_v1(channel, reflection_pb2.ServerReflectionRequest(list_services=""))
    assert sorted(s.name for s in answer.list_services_response.service) == SERVICES


def test_v1_describes_itself_in_its_own_package(channel: grpc.Channel) -> None:
    ask = reflection_pb2.ServerReflectionRequest
    answers = _ask_v1(
        channel,
        ask(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
        ask(file_containing_symbol="no.such.Symbol"),
    )
    found, missing = answers
    (serialized,) = found.file_descriptor_response.file_descriptor_proto
    file = descriptor_pb2.FileDescriptorProto.FromString(serialized)
    assert file.package == "grpc.reflection.v1"
    (method,) = file.service[0].method
    assert method.input_type == ".grpc.reflection.v1.ServerReflectionRequest"
    assert method.client_streaming
    assert method.server_streaming
    assert missing.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


def test_a_malformed_reflection_request_is_invalid_argument(channel: grpc.Channel) -> None:
    call = channel.stream_stream(V1_INFO)
    with pytest.raises(grpc.RpcError) as raised:
        list(call(iter([b"\x0a\xff"]), timeout=10))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
