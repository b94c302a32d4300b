"""Requests of a chosen size, and ways to keep bytes in flight on a server without timing.

- ``grpc_copy`` / ``rest_copy``: the model ``copy`` with an n-byte UINT8 input (tritonclient
  over gRPC; plain HTTP with KServe's binary extension over REST).
- ``Gate``: a ``gate`` graph request held inside its Python node until ``release()``.
- ``Hog``: a REST request whose body is declared but never sent, so its bytes stay counted.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
from rest_process import Reply, send
from serving_process import wait_until
from tritonclient.utils import InferenceServerException

QUOTA = 1 << 20  # --grpc_memory_quota of the shared test server


def uint8_input(size: int) -> grpcclient.InferInput:
    given = grpcclient.InferInput("input", [size], "UINT8")
    given.set_data_from_numpy(np.full(size, 7, np.uint8))
    return given


def grpc_copy(url: str, size: int) -> InferenceServerException | None:
    """The error of ``copy`` on ``size`` bytes, or None when it answered them back."""
    with grpcclient.InferenceServerClient(url) as client:
        try:
            result = client.infer("copy", [uint8_input(size)])
        except InferenceServerException as error:
            return error
    assert result.as_numpy("output").shape == (size,)
    return None


def rest_copy_body(size: int) -> tuple[bytes, dict[str, str]]:
    header = json.dumps(
        {
            "inputs": [
                {
                    "name": "input",
                    "shape": [size],
                    "datatype": "UINT8",
                    "parameters": {"binary_data_size": size},
                }
            ]
        }
    ).encode()
    headers = {"Inference-Header-Content-Length": str(len(header))}
    return header + bytes(size), headers


def rest_copy(port: int, size: int) -> Reply:
    body, headers = rest_copy_body(size)
    return send(port, "POST", "/v2/models/copy/infer", body, headers)


class Gate:
    """One ``gate`` request of ``size`` bytes, held in the graph's node until ``release``."""

    def __init__(self, url: str, folder: Path, size: int) -> None:
        self._folder = folder
        (folder / "open").unlink(missing_ok=True)
        (folder / "entered").unlink(missing_ok=True)
        self._client = grpcclient.InferenceServerClient(url)
        self._answers: list = []
        self._client.async_infer(
            "gate",
            [uint8_input(size)],
            callback=lambda result, error: self._answers.append((result, error)),
        )
        wait_until(lambda: (folder / "entered").exists(), "the gate request to reach its node")

    def release(self) -> int:
        """Lets the request go; returns the size its node saw."""
        (self._folder / "open").touch()
        wait_until(lambda: bool(self._answers), "the gate request to be answered")
        result, error = self._answers[0]
        self._client.close()
        (self._folder / "entered").unlink()
        assert error is None, error
        return int(result.as_numpy("output")[0])


class Hog:
    """A REST request declaring ``size`` body bytes and sending none: the server counts them
    from the moment it starts reading the body until the connection closes."""

    def __init__(self, port: int, size: int) -> None:
        self._socket = socket.create_connection(("127.0.0.1", port))
        self._socket.sendall(
            b"POST /v2/models/copy/infer HTTP/1.1\r\nHost: ovmsx\r\n"
            b"Content-Length: %d\r\n\r\n" % size
        )

    def close(self) -> None:
        self._socket.close()
