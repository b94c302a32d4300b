"""The REST rows' requests and the good JSON request sent after each (plain HTTP through
``http.client``: the bytes on the wire are the row's own)."""

from __future__ import annotations

import json
import re
import select
import socket
from dataclasses import dataclass

import numpy as np
from good_requests import DATATYPES, DYNAMIC, TEXTS, TYPED, X
from rest_process import HOST, Reply, send

Message = str | re.Pattern[str]

# Seconds to wait for an answer between two pieces of an oversized head (pacing only).
PACE = 0.05

JSON_INVALID = "The file is not valid json"
NESTING = "JSON nesting depth exceeds the allowed limit"
MESSAGE_STRUCTURE = (
    "Passing buffers both in ModelInferRequest::InferInputTensor::contents and in "
    "ModelInferRequest::raw_input_contents is not allowed"
)
NOT_AN_OBJECT = "Request body should be JSON object"
NO_INPUTS = "Invalid JSON structure, missing inputs"
UNPARSABLE = "Could not parse input content. Not valid ndarray detected"
UNPARSABLE_OUTPUT = "Could not parse output content."
PARAMETERS = "Could not parse request parameters"
UNSUPPORTED = "Could not parse input content. Unsupported data precision detected"
SIZE_INVALID = "binary_data_size parameter is invalid and cannot be parsed"
BUFFER_EXCEEDED = "Received buffer size is smaller than binary_data_size parameter indicates"
HEADER_INVALID = "Inference-Header-Content-Length header is invalid and couldn't be parsed"
HEADER_EXCEEDED = "Inference-Header-Content-Length header exceeds the size of the request body"
BOTH_CONTENTS = "Request contains values both in binary data and in content value"
INVALID_URL = "Invalid request URL"
UNSUPPORTED_METHOD = "Unsupported method"


@dataclass(frozen=True)
class RestRow:
    id: str
    target: str
    """The servable the request is for; the good request after the row goes to it."""
    body: bytes
    status: int
    message: Message
    """The ``error`` of the JSON error body; a pattern where a part of it varies."""
    headers: tuple[tuple[str, str], ...] = ()
    path: str = ""
    """The request path; by default ``/v2/models/<target>/infer``."""
    method: str = "POST"
    oversized_head: bool = False
    """The head is larger than the server takes: it is sent piece by piece (see below)."""


def infer_path(target: str, version: str = "") -> str:
    return f"/v2/models/{target}" + (f"/versions/{version}" if version else "") + "/infer"


def send_row(port: int, row: RestRow) -> Reply:
    path = row.path or infer_path(row.target)
    if row.oversized_head:
        return _send_oversized_head(port, row.method, path, row.headers)
    return send(port, row.method, path, row.body, dict(row.headers))


def _send_oversized_head(
    port: int, method: str, path: str, headers: tuple[tuple[str, str], ...]
) -> Reply:
    """A request whose head the server refuses before reading all of it. http.client would
    write the whole head at once; the server answers and closes with part of it unread, and
    the kernel then resets the connection, which can discard the answer before the client
    reads it. So the head goes in pieces, each after the server has had a moment to read the
    last one, and no piece follows once the answer has arrived."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}"]
    lines += [f"{name}: {value}" for name, value in headers] + ["Content-Length: 0", "", ""]
    head = "\r\n".join(lines).encode("latin-1")
    with socket.create_connection((HOST, port), timeout=30) as connection:
        sent = 0
        while sent < len(head) and not select.select([connection], [], [], PACE)[0]:
            try:
                sent += connection.send(head[sent : sent + 16384])
            except (BrokenPipeError, ConnectionResetError):
                break
        answer = b""
        while chunk := connection.recv(1 << 16):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    fields, _, data = rest.partition(b"\r\n\r\n")
    found = {}
    for line in fields.split(b"\r\n"):
        name, _, value = line.decode("latin-1").partition(":")
        found[name.strip().lower()] = value.strip()
    return Reply(int(status_line.split()[1]), found, data)


def document(target: str) -> dict:
    """The good JSON request of ``target``."""
    if target in ("add_one", "add_two"):
        return {"inputs": [_tensor("input", X)]}
    if target == "identity":
        return {"inputs": [_tensor("input", DYNAMIC)]}
    if target == "echo":
        return {"inputs": [_tensor("in", X)]}
    if target == "strings":
        texts = [text.decode() for text in TEXTS]
        return {"inputs": [{"name": "text", "shape": [3], "datatype": "BYTES", "data": texts}]}
    assert target == "typed", target
    return {"inputs": [_tensor(name, values) for name, values in TYPED.items()]}


def _tensor(name: str, values: np.ndarray) -> dict:
    return {
        "name": name,
        "shape": list(values.shape),
        "datatype": DATATYPES[values.dtype],
        "data": values.reshape(-1).tolist(),
    }


def body(target: str, **changes) -> bytes:
    """The good request of ``target`` with its first input's fields changed (a value of
    ``...`` removes the field)."""
    given = document(target)
    tensor = given["inputs"][0]
    for key, value in changes.items():
        if value is ...:
            del tensor[key]
        else:
            tensor[key] = value
    return json.dumps(given).encode()


def top(target: str, **changes) -> bytes:
    """The good request of ``target`` with top-level fields changed."""
    given = document(target)
    given.update(changes)
    return json.dumps(given).encode()


def check_good_answer(target: str, reply: Reply) -> None:
    assert reply.status == 200, reply
    answer = reply.json()
    assert answer["model_name"] == target, answer
    outputs = {output["name"]: output for output in answer["outputs"]}
    if target in ("add_one", "add_two", "identity", "echo"):
        given = DYNAMIC if target == "identity" else X
        added = {"add_one": 1, "add_two": 2}.get(target, 0)
        found = outputs["out" if target == "echo" else "output"]
        assert found["datatype"] == "FP32", found
        assert found["shape"] == list(given.shape), found
        np.testing.assert_array_equal(found["data"], (given + added).reshape(-1))
    elif target == "strings":
        texts = [text.decode() for text in TEXTS]
        assert outputs["twice"]["data"] == texts + texts, outputs
        assert outputs["count"]["data"] == [len(TEXTS)], outputs
    else:
        assert target == "typed", target
        for name, values in TYPED.items():
            expected = ~values if name == "bool" else values + values.dtype.type(1)
            assert outputs[f"{name}_out"]["data"] == expected.tolist(), outputs


def check_still_serving(port: int, target: str) -> None:
    reply = send(port, "POST", infer_path(target), json.dumps(document(target)))
    check_good_answer(target, reply)
