"""Sends a gRPC row as raw bytes (no client library decides what goes on the wire) and reads
back what the server answered."""

from __future__ import annotations

from typing import NamedTuple

import grpc
from good_requests import check_good_answer, good_request
from grpc_requests import GrpcRow
from tritonclient.grpc import service_pb2 as pb

SERVICE = "/inference.GRPCInferenceService/"


class Outcome(NamedTuple):
    code: grpc.StatusCode | None
    message: str
    request_id: str = ""


def send_row(channel: grpc.Channel, row: GrpcRow, timeout: float = 10.0) -> Outcome:
    """The status a unary row ended with, or a stream row's one error reply (its good replies
    are checked here: the stream goes on after the error)."""
    if isinstance(row.body, list):
        return _stream(channel, row, timeout)
    call = channel.unary_unary(SERVICE + row.method)  # bytes in, bytes out
    try:
        answer = call(row.body, metadata=row.metadata or None, timeout=timeout)
    except grpc.RpcError as error:
        return Outcome(error.code(), error.details() or "")
    if row.method == "ModelInfer":
        check_good_answer(row.target, pb.ModelInferResponse.FromString(answer))
    return Outcome(grpc.StatusCode.OK, "")


def _stream(channel: grpc.Channel, row: GrpcRow, timeout: float) -> Outcome:
    call = channel.stream_stream(
        SERVICE + "ModelStreamInfer", response_deserializer=pb.ModelStreamInferResponse.FromString
    )
    replies = []
    try:
        for reply in call(iter(row.body), timeout=timeout):
            replies.append(reply)
    except grpc.RpcError as error:
        assert not replies, replies
        return Outcome(error.code(), error.details() or "")
    errors = [reply for reply in replies if reply.error_message]
    assert len(errors) == 1, replies
    answers = [reply.infer_response for reply in replies if not reply.error_message]
    assert len(answers) == len(row.body) - 1, replies
    for answer in answers:
        check_good_answer(row.target, answer)
    return Outcome(None, errors[0].error_message, errors[0].infer_response.id)


def check_still_serving(channel: grpc.Channel, target: str) -> None:
    call = channel.unary_unary(
        SERVICE + "ModelInfer", response_deserializer=pb.ModelInferResponse.FromString
    )
    check_good_answer(target, call(good_request(target).SerializeToString(), timeout=10.0))
