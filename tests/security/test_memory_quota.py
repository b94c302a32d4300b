"""--grpc_memory_quota: request bytes in flight, gRPC and REST together, are bounded; a request
that does not fit is refused at once with a message naming the quota and the sizes, and its
bytes are given back (nothing is left counted, nothing accumulates in memory)."""

from __future__ import annotations

import re
import select
import socket
from pathlib import Path

import psutil
from graph_streams import Stream
from quota_clients import QUOTA, Gate, Hog, grpc_copy, rest_copy, uint8_input
from rest_process import RestProcess
from serving_process import wait_until

HELD = 600_000  # bytes a held request takes: two of them do not fit in QUOTA
SMALL = 1_000
TOO_LARGE = re.compile(
    rf"Request of (\d+) bytes is larger than the memory quota of {QUOTA} bytes "
    r"\(--grpc_memory_quota\)"
)
NO_ROOM = re.compile(
    r"Request of (\d+) bytes refused: requests in flight hold (\d+) of the memory quota of "
    rf"{QUOTA} bytes \(--grpc_memory_quota\)"
)


def _refused_for_room(error, size: int) -> None:
    assert error is not None, "expected RESOURCE_EXHAUSTED, the request was answered"
    assert error.status() == "StatusCode.RESOURCE_EXHAUSTED", error
    found = NO_ROOM.fullmatch(error.message())
    assert found, error.message()
    assert int(found[1]) >= size  # the message, a few bytes more than its tensor
    assert int(found[2]) >= HELD


def _budget_is_whole_again(server: RestProcess) -> None:
    """Nearly the whole quota fits, over gRPC and over REST: every byte was given back."""
    assert grpc_copy(_grpc_url(server), 1_000_000) is None
    assert rest_copy(server.rest_port, 1_000_000).status == 200


def _grpc_url(server: RestProcess) -> str:
    return f"127.0.0.1:{server.port}"


def test_a_grpc_request_larger_than_the_quota_is_refused(guarded: RestProcess) -> None:
    error = grpc_copy(_grpc_url(guarded), QUOTA + 1)
    assert error is not None, "expected RESOURCE_EXHAUSTED, the request was answered"
    assert error.status() == "StatusCode.RESOURCE_EXHAUSTED", error
    found = TOO_LARGE.fullmatch(error.message())
    assert found, error.message()
    assert int(found[1]) > QUOTA
    assert grpc_copy(_grpc_url(guarded), SMALL) is None


def test_a_rest_body_larger_than_the_quota_gets_413_before_it_is_read(
    guarded: RestProcess,
) -> None:
    with socket.create_connection(("127.0.0.1", guarded.rest_port), timeout=30) as client:
        client.sendall(
            b"POST /v2/models/copy/infer HTTP/1.1\r\nHost: ovmsx\r\n"
            b"Content-Length: %d\r\n\r\n" % (QUOTA + 1)
        )
        answer = _read_to_close(client)  # the body was never sent: the server did not wait
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ")
    assert b"connection: close" in head.lower()
    assert body == b'{"error":"Request body larger than %d bytes"}' % QUOTA


def test_a_chunked_rest_body_is_refused_once_it_passes_the_quota(guarded: RestProcess) -> None:
    chunk = b"x" * 65536
    endless = 64 * QUOTA  # the answer must come long before this much was sent
    with socket.create_connection(("127.0.0.1", guarded.rest_port), timeout=30) as client:
        client.sendall(
            b"POST /v2/models/copy/infer HTTP/1.1\r\nHost: ovmsx\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        sent = 0
        try:
            while sent < endless and not select.select([client], [], [], 0)[0]:
                client.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
        except OSError:
            pass  # it closed while this was still sending
        answer = _read_to_close(client)
    assert sent < endless
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert answer.endswith(b'{"error":"Request body larger than %d bytes"}' % QUOTA)
    assert rest_copy(guarded.rest_port, SMALL).status == 200


def test_requests_in_flight_hold_the_budget_for_grpc_and_rest(
    guarded: RestProcess, gate_folder: Path
) -> None:
    gate = Gate(_grpc_url(guarded), gate_folder, HELD)  # answered later, on the event loop
    try:
        _refused_for_room(grpc_copy(_grpc_url(guarded), HELD), HELD)
        reply = rest_copy(guarded.rest_port, HELD)
        assert reply.status == 503, reply
        found = NO_ROOM.fullmatch(reply.error)
        assert found, reply.error
        assert int(found[1]) > HELD
        assert int(found[2]) >= HELD
        # What is left of the quota still serves.
        assert grpc_copy(_grpc_url(guarded), SMALL) is None
        assert rest_copy(guarded.rest_port, SMALL).status == 200
    finally:
        assert gate.release() == HELD
    _budget_is_whole_again(guarded)


def test_a_rest_body_being_read_holds_the_budget_until_its_client_leaves(
    guarded: RestProcess,
) -> None:
    hog = Hog(guarded.rest_port, HELD)
    try:
        wait_until(
            lambda: grpc_copy(_grpc_url(guarded), HELD) is not None,
            "the REST body to be counted",
        )
        _refused_for_room(grpc_copy(_grpc_url(guarded), HELD), HELD)
    finally:
        hog.close()
    wait_until(lambda: grpc_copy(_grpc_url(guarded), HELD) is None, "the bytes to be given back")
    _budget_is_whole_again(guarded)


def _second_stream_message_refused(guarded: RestProcess, servable: str) -> list:
    """While a REST body holds most of the quota, a stream to ``servable`` is answered for a
    small message and refused for one that does not fit; returns the small one's output."""
    hog = Hog(guarded.rest_port, HELD)
    stream = Stream(_grpc_url(guarded))
    try:
        wait_until(
            lambda: grpc_copy(_grpc_url(guarded), HELD) is not None,
            "the REST body to be counted",
        )
        stream.send(servable, [uint8_input(SMALL)])
        answered = stream.result().as_numpy("output").tolist()
        stream.send(servable, [uint8_input(HELD)])
        _result, error = stream.next()
        _refused_for_room(error, HELD)
    finally:
        stream.client.stop_stream()
        stream.client.close()
        hog.close()
    wait_until(lambda: grpc_copy(_grpc_url(guarded), HELD) is None, "the bytes to be given back")
    return answered


def test_a_stream_message_that_does_not_fit_ends_the_stream(guarded: RestProcess) -> None:
    assert len(_second_stream_message_refused(guarded, "copy")) == SMALL


def test_a_graph_stream_message_that_does_not_fit_ends_the_stream(
    guarded: RestProcess, gate_folder: Path
) -> None:
    (gate_folder / "open").touch()  # the gate lets everything through
    try:
        assert _second_stream_message_refused(guarded, "gate") == [SMALL]
    finally:
        (gate_folder / "open").unlink()
        (gate_folder / "entered").unlink(missing_ok=True)


def test_refused_requests_leave_no_memory_behind(guarded: RestProcess) -> None:
    server = psutil.Process(guarded.process.pid)

    def refuse(times: int) -> None:
        for _ in range(times):
            error = grpc_copy(_grpc_url(guarded), QUOTA + 1)
            assert error is not None
            assert error.status() == "StatusCode.RESOURCE_EXHAUSTED"
            _refused_for_room(grpc_copy(_grpc_url(guarded), HELD), HELD)
            assert rest_copy(guarded.rest_port, HELD).status == 503  # its body read and dropped

    hog = Hog(guarded.rest_port, HELD)
    try:
        wait_until(
            lambda: grpc_copy(_grpc_url(guarded), HELD) is not None,
            "the REST body to be counted",
        )
        refuse(10)  # warm-up: allocator arenas, gRPC buffers
        before = server.memory_info().rss
        refuse(40)  # 120 refused requests of 0.6 to 1 MiB each
        grown = server.memory_info().rss - before
    finally:
        hog.close()
    assert grown < 8 * QUOTA, f"RSS grew by {grown} bytes over 120 refused requests"
    wait_until(lambda: grpc_copy(_grpc_url(guarded), HELD) is None, "the bytes to be given back")
    _budget_is_whole_again(guarded)


def _read_to_close(client: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset counts as closed:
    the server may close with the client's unread bytes in its buffer)."""
    data = b""
    try:
        while chunk := client.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data
