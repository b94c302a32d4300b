"""The head of a request is bounded: over REST, a request line and headers past 64 KiB get 431
and the connection is closed, whatever the client goes on sending; over gRPC, metadata past
gRPC's limits is refused with RESOURCE_EXHAUSTED. The server keeps serving after each."""

from __future__ import annotations

import contextlib
import socket

import pytest
import tritonclient.grpc as grpcclient
from rest_process import RestProcess
from tritonclient.utils import InferenceServerException

from ovmsx.frontend.rest_head_limit import MAX_HEAD_BYTES

LIVE = b"GET /v2/health/live HTTP/1.1\r\nHost: ovmsx\r\n"
REFUSAL = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: application/json\r\ncontent-length: 58\r\nconnection: close\r\n\r\n"
    b'{"error":"Request header section larger than 65536 bytes"}'
)


def _exchange(port: int, request: bytes) -> bytes:
    """Send ``request`` (as much as the server takes) and read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        with contextlib.suppress(OSError):  # closed while this was still sending
            client.sendall(request)
        data = b""
        try:
            while chunk := client.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass  # closed with unread bytes of the request still in its buffer
    return data


def _still_serving(server: RestProcess) -> None:
    assert server.request("GET", "/v2/health/live").status == 200


@pytest.mark.parametrize(
    "head",
    [
        pytest.param(LIVE + b"X-Big: " + b"a" * (1 << 20) + b"\r\n\r\n", id="1 MB header line"),
        pytest.param(b"".join(b"X-%d: v\r\n" % i for i in range(20_000)), id="20000 headers"),
        pytest.param(b"GET /v2/" + b"a" * (1 << 20) + b" HTTP/1.1\r\n\r\n", id="1 MB URL"),
    ],
)
def test_a_head_past_the_limit_gets_431_and_the_connection_closes(
    guarded: RestProcess, head: bytes
) -> None:
    if not head.startswith(b"GET"):
        head = LIVE + head + b"\r\n"
    assert _exchange(guarded.rest_port, head) == REFUSAL
    _still_serving(guarded)


def test_an_endless_header_is_not_read_to_its_end(guarded: RestProcess) -> None:
    with socket.create_connection(("127.0.0.1", guarded.rest_port), timeout=30) as client:
        client.sendall(LIVE + b"X-Endless: ")
        sent, limit = 0, 1 << 30
        try:
            while sent < limit:
                client.sendall(b"a" * 65536)
                sent += 65536
        except OSError:
            pass  # the server closed the connection: it stopped reading
        assert sent < limit
    _still_serving(guarded)


def test_a_head_within_the_limit_is_served(guarded: RestProcess) -> None:
    padding = b"a" * (MAX_HEAD_BYTES - 2048)
    with socket.create_connection(("127.0.0.1", guarded.rest_port), timeout=30) as client:
        client.sendall(LIVE + b"X-Padding: " + padding + b"\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b'{"live":true}')


@pytest.mark.parametrize("size", [20_000, 1 << 20])
def test_grpc_metadata_past_grpc_limit_is_refused(guarded: RestProcess, size: int) -> None:
    with grpcclient.InferenceServerClient(f"127.0.0.1:{guarded.port}") as client:
        with pytest.raises(InferenceServerException) as refused:
            client.is_server_live(headers={"x-big": "a" * size})
        assert refused.value.status() == "StatusCode.RESOURCE_EXHAUSTED"
        # gRPC's own words, e.g. "received metadata size exceeds hard limit (value length
        # 20000 vs. 16384)"
        assert "metadata size exceeds" in refused.value.message(), refused.value.message()
        assert client.is_server_live(headers={"x-small": "a" * 4000})
