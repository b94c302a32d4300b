"""Connections whose request never arrives are closed by the server (--rest_request_timeout).

Hundreds of clients hold connections open: some send nothing, some a request head a byte at a
time, some a head and then part of the body a byte at a time. Against a server started with a
2-second timeout, every one of them must be closed by the server (with 408 where a request was
begun), while ordinary requests sent meanwhile keep being answered correctly. The only bound
on time is a generous one on when all of them must be closed.
"""

from __future__ import annotations

import re
import resource
import selectors
import socket
import time
from collections.abc import Iterator

import numpy as np
import pytest
import serving_models as sm
from rest_process import HOST, RestProcess, rest_served

from ovmsx.config import UsageError, parse_options

TIMEOUT = 2
PER_KIND = 100
KINDS = ("silent", "head", "body")
# Generous: the server closes each stalled connection about TIMEOUT seconds after its request
# began; this bounds how long the test waits for the last of them, on a loaded machine.
ALL_CLOSED_WITHIN = 120.0
TRICKLE_EVERY = 0.5
X = np.arange(10, dtype=np.float32).reshape(1, 10)
HEAD = b"POST /v2/models/add_one/infer HTTP/1.1\r\nHost: ovmsx\r\n"
BODY_HEAD = HEAD + b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"


@pytest.fixture(scope="module")
def enough_descriptors() -> Iterator[None]:
    """Room for every stalled connection on both ends (the server inherits the limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 4 * PER_KIND * len(KINDS) + 512
    if soft != resource.RLIM_INFINITY and soft < needed:
        raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        assert raised >= needed, f"the hard limit on open files ({hard}) is below {needed}"
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, enough_descriptors: None) -> Iterator:
    root = tmp_path_factory.mktemp("stalled")
    sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "add_one")
    args = ["--model_name", "add_one", "--model_path", str(root / "add_one")]
    args += ["--rest_request_timeout", str(TIMEOUT), "--log_level", "DEBUG"]
    with rest_served(args, root) as process:
        yield process


class Stalled:
    """One client that never finishes its request: it sends its opening bytes, then (``head``
    and ``body``) one more byte every TRICKLE_EVERY seconds, and records what it reads."""

    def __init__(self, kind: str, port: int) -> None:
        self.kind = kind
        self.sock = socket.create_connection((HOST, port), timeout=30)
        self.sock.setblocking(False)
        self.received = b""
        self.closed = False
        opening = {"silent": b"", "head": HEAD + b"X-Slow", "body": BODY_HEAD + b'{"inputs": '}
        if opening[kind]:
            self.sock.sendall(opening[kind])

    def trickle(self) -> None:
        if self.kind == "silent" or self.closed:
            return
        try:
            self.sock.send(b"a" if self.kind == "head" else b" ")
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:  # reset or broken: the server has closed it
            self.closed = True

    def read(self) -> None:
        try:
            chunk = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.closed = True
            return
        if chunk:
            self.received += chunk
        else:
            self.closed = True


def test_stalled_connections_are_closed_while_others_are_served(server: RestProcess) -> None:
    clients = [Stalled(kind, server.rest_port) for kind in KINDS for _ in range(PER_KIND)]
    selector = selectors.DefaultSelector()
    for client in clients:
        selector.register(client.sock, selectors.EVENT_READ, client)
    answered = 0
    deadline = time.monotonic() + ALL_CLOSED_WITHIN
    next_trickle = 0.0
    try:
        while not all(client.closed for client in clients) and time.monotonic() < deadline:
            now = time.monotonic()
            if now >= next_trickle:
                for client in clients:
                    client.trickle()
                next_trickle = now + TRICKLE_EVERY
                # An ordinary request meanwhile, on a connection of its own.
                reply = server.infer("add_one", _request())
                assert reply.status == 200, reply
                assert reply.json()["outputs"][0]["data"] == (X + 1).ravel().tolist()
                answered += 1
            for key, _ in selector.select(timeout=TRICKLE_EVERY / 5):
                client = key.data
                client.read()
                if client.closed:
                    selector.unregister(client.sock)
    finally:
        selector.close()
        for client in clients:
            client.sock.close()
    still_open = [client.kind for client in clients if not client.closed]
    assert still_open == [], f"{len(still_open)} stalled connections still open: {still_open}"
    assert answered > 0
    for client in clients:
        if client.kind == "silent":
            assert client.received == b"", client.received  # no request, no answer
        else:
            assert client.received.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), client
            assert b'{"error":"Request not received within 2 seconds"}' in client.received
    # The server still serves, and says how many it closed.
    reply = server.infer("add_one", _request())
    assert reply.status == 200, reply
    closes = re.findall(r"\((\d+) stalled connections closed so far\)", server.log())
    counts = [int(count) for count in closes]
    assert max(counts) >= len(clients), counts[-5:]


def _request() -> dict:
    return {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32", "data": X.tolist()}]}


@pytest.mark.parametrize("given", ["0", "-1", "nan", "inf", "soon"])
def test_the_timeout_is_a_positive_number_of_seconds(given: str) -> None:
    base = ["--model_name", "m", "--model_path", "/m", "--rest_port", "9"]
    assert parse_options(base).rest_request_timeout == 30
    assert parse_options([*base, "--rest_request_timeout", "0.5"]).rest_request_timeout == 0.5
    with pytest.raises(UsageError, match="positive number of seconds"):
        parse_options([*base, "--rest_request_timeout", given])
