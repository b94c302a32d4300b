"""A small HTTP/1.1 load generator for KServe v2 REST: one process, keep-alive connections.

Each of ``concurrency`` connections sends the same pre-built request, waits for the whole
response, and sends it again, until the time is up; every response must be 200 (the run stops
at the first that is not). Requests and responses are handled as raw bytes on an asyncio
protocol, so the client costs the same whatever server it drives, and little.

    rate, answered = asyncio.run(measure("127.0.0.1", port, request_bytes, 4, seconds=3))

It is the project's own load generator: the REST benchmarks use it, and the benchmarks that
compare ovmsx with itself can use it instead of perf_analyzer (``--load-generator rest_load``).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class Reply(NamedTuple):
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes


@dataclass(frozen=True)
class RestCase:
    """One benchmark request: its name, the path, headers and body it sends."""

    name: str
    path: str
    body: bytes
    json_length: int | None = None  # Inference-Header-Content-Length, for binary requests

    def request_bytes(self, host: str, port: int) -> bytes:
        lines = [
            f"POST {self.path} HTTP/1.1",
            f"Host: {host}:{port}",
            # Binary bodies as KServe's own client sends them (its server parses a JSON
            # content type as JSON).
            f"Content-Type: application/{'json' if self.json_length is None else 'octet-stream'}",
            f"Content-Length: {len(self.body)}",
        ]
        if self.json_length is not None:
            lines.append(f"Inference-Header-Content-Length: {self.json_length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + self.body


def infer_case(model: str, name: str, shape: tuple[int, ...], binary: bool) -> RestCase:
    """A KServe v2 infer request with FP32 data: JSON numbers (and a JSON answer), or binary
    data both ways (``binary_data_size`` and ``binary_data_output``)."""
    rng = np.random.default_rng(0)
    # Two decimals, as the OVMS tuning guide advises for JSON: short numbers parse faster.
    values = np.round(rng.random(int(np.prod(shape)), dtype=np.float32) * 100, 2)
    spec: dict[str, object] = {"name": name, "shape": list(shape), "datatype": "FP32"}
    if not binary:
        spec["data"] = [float(v) for v in values]
        body = json.dumps({"inputs": [spec]}, separators=(",", ":")).encode()
        return RestCase(f"{model} JSON", f"/v2/models/{model}/infer", body)
    raw = values.astype(np.float32).tobytes()
    spec["parameters"] = {"binary_data_size": len(raw)}
    document = {"inputs": [spec], "parameters": {"binary_data_output": True}}
    header = json.dumps(document, separators=(",", ":")).encode()
    return RestCase(f"{model} binary", f"/v2/models/{model}/infer", header + raw, len(header))


def binary_case(model: str, inputs: dict[str, np.ndarray]) -> RestCase:
    """A KServe v2 infer request carrying ``inputs`` (numeric arrays, any datatype) as binary
    data, and asking for binary outputs: what a gRPC ``ModelInfer`` of the same arrays carries,
    over REST."""
    specs, chunks = [], []
    for name, array in inputs.items():
        raw = np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes()
        datatype = DATATYPES[array.dtype.name]
        specs.append({"name": name, "shape": list(array.shape), "datatype": datatype,
                      "parameters": {"binary_data_size": len(raw)}})  # fmt: skip
        chunks.append(raw)
    document = {"inputs": specs, "parameters": {"binary_data_output": True}}
    header = json.dumps(document, separators=(",", ":")).encode()
    body = header + b"".join(chunks)
    return RestCase(f"{model} binary", f"/v2/models/{model}/infer", body, len(header))


# numpy dtype name -> KServe v2 datatype, for binary_case.
DATATYPES = {
    "bool": "BOOL", "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32",
    "uint64": "UINT64", "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
    "float16": "FP16", "float32": "FP32", "float64": "FP64",
}  # fmt: skip


def _dechunk(buffer: bytearray, start: int) -> tuple[bytes, int] | None:
    """A chunked body that starts at ``start``, and where it ends; None while incomplete
    (some servers answer binary data chunked)."""
    parts, at = [], start
    while True:
        line_end = buffer.find(b"\r\n", at)
        if line_end < 0:
            return None
        size = int(bytes(buffer[at:line_end]).split(b";", 1)[0], 16)
        at = line_end + 2
        if size == 0:  # no trailers are sent by the servers measured here
            return (b"".join(parts), at + 2) if len(buffer) >= at + 2 else None
        if len(buffer) < at + size + 2:
            return None
        parts.append(bytes(buffer[at : at + size]))
        at += size + 2


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self._buffer = bytearray()
        self._waiter: asyncio.Future[Reply] | None = None
        self._need: int | None = None
        self._status = 0
        self._headers: dict[str, str] = {}
        self._head = 0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._need is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self._buffer[:end]).decode("latin-1").split("\r\n")
            self._status = int(head[0].split(" ", 2)[1])
            self._headers = {}
            for line in head[1:]:
                key, _, value = line.partition(":")
                self._headers[key.strip().lower()] = value.strip()
            self._head = end + 4
            if self._headers.get("transfer-encoding") == "chunked":
                self._need = -1  # the body ends where its last (empty) chunk says
            else:
                self._need = self._head + int(self._headers.get("content-length", 0))
        if self._need == -1:
            found = _dechunk(self._buffer, self._head)
            if found is None:
                return
            body, end = found
        elif len(self._buffer) >= self._need:
            body, end = bytes(self._buffer[self._head : self._need]), self._need
        else:
            return
        del self._buffer[:end]
        self._need = None
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(Reply(self._status, self._headers, body))

    def connection_lost(self, exc) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionError(f"connection lost: {exc}"))

    def send(self, request: bytes) -> asyncio.Future[Reply]:
        self._waiter = asyncio.get_running_loop().create_future()
        assert self.transport is not None
        self.transport.write(request)
        return self._waiter


async def send_once(host: str, port: int, request: bytes) -> Reply:
    """One request on a fresh connection."""
    loop = asyncio.get_running_loop()
    transport, connection = await loop.create_connection(_Connection, host, port)
    try:
        return await connection.send(request)
    finally:
        transport.close()


async def measure(
    host: str,
    port: int,
    request: bytes,
    concurrency: int,
    seconds: float,
    warmup: float = 0.5,
    between_answers: bool = False,
) -> tuple[float, int]:
    """Requests per second over ``seconds`` (after ``warmup``) with ``concurrency``
    keep-alive connections each sending one request at a time, and how many requests were
    answered in all (warm-up included).

    ``between_answers``: the rate from the first answer in the window to the last, for servers
    that answer in bursts (a batch of requests at once, seconds apart): counting the answers
    inside a fixed window then depends on where its ends fall between two bursts."""
    loop = asyncio.get_running_loop()
    connections = [
        (await loop.create_connection(_Connection, host, port))[1] for _ in range(concurrency)
    ]
    start = time.perf_counter()
    counting_from = start + warmup
    deadline = counting_from + seconds
    answered = [0] * concurrency
    times: list[float] = []  # the answers' times inside the window, in order

    async def drive(index: int) -> None:
        connection = connections[index]
        while True:
            status, _, body = await connection.send(request)
            now = time.perf_counter()
            if status != 200:
                raise RuntimeError(f"HTTP {status}: {body[:300]!r}")
            answered[index] += 1
            if now >= deadline:
                return
            if now >= counting_from:
                times.append(now)

    try:
        await asyncio.gather(*(drive(i) for i in range(concurrency)))
    finally:
        for connection in connections:
            assert connection.transport is not None
            connection.transport.close()
    if between_answers:
        # Answers of one burst come within a millisecond or so of each other: the first
        # burst opens the span, the ones after it count.
        first, last = (times[0], times[-1]) if times else (0.0, 0.0)
        if last - first < seconds / 4:
            raise RuntimeError(
                f"{len(times)} answers in {seconds:g} s: too few to rate; measure for longer"
            )
        after_first = sum(1 for moment in times if moment > first + 0.001)
        return after_first / (last - first), sum(answered)
    return len(times) / seconds, sum(answered)
