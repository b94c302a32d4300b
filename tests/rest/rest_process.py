"""Runs the real ``ovmsx`` server with ``--rest_port`` on free loopback ports, and sends it
plain HTTP requests (``http.client``: what the REST API looks like without any client library)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.client import HTTPConnection
from pathlib import Path
from typing import NamedTuple

from serving_process import READY_TIMEOUT, STOP_TIMEOUT, free_port

HOST = "127.0.0.1"
# What a server's log must never hold: the marks of a crash, whatever the test sent it.
CRASH_SIGNS = ("Fatal Python error", "terminate called", "Segmentation fault")


class Reply(NamedTuple):
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)

    @property
    def error(self) -> str:
        """The message of OVMS's error body ``{"error": "<message>"}``."""
        document = self.json()
        assert isinstance(document, dict), document
        assert set(document) == {"error"}, document
        return document["error"]


def send(
    port: int,
    method: str,
    path: str,
    body: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> Reply:
    connection = HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=dict(headers or {}))
        response = connection.getresponse()
        data = response.read()
        found = {key.lower(): value for key, value in response.getheaders()}
        return Reply(response.status, found, data)
    finally:
        connection.close()


class RestProcess:
    """``ovmsx <args> --rest_port R [--port G]``, bound to 127.0.0.1, its log in ``workdir``.
    ``grpc=False`` leaves gRPC off (REST only)."""

    def __init__(
        self,
        args: Sequence[str],
        workdir: Path,
        grpc: bool = True,
        environment: Mapping[str, str] | None = None,
    ) -> None:
        self.rest_port = free_port()
        self.port = free_port() if grpc else 0
        self.url = f"{HOST}:{self.rest_port}"
        self.log_path = workdir / f"server-{self.rest_port}.log"
        command = [sys.executable, "-m", "ovmsx", *args]
        command += ["--rest_port", str(self.rest_port), "--rest_bind_address", HOST]
        if grpc:
            command += ["--port", str(self.port), "--grpc_bind_address", HOST]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **environment} if environment else None,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def request(self, method: str, path: str, body=None, headers=None) -> Reply:
        return send(self.rest_port, method, path, body, headers)

    def infer(self, name: str, document: object, version: str | None = None) -> Reply:
        path = f"/v2/models/{name}" + (f"/versions/{version}" if version else "") + "/infer"
        return self.request("POST", path, json.dumps(document))

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> Reply:
        """Poll ``GET /v2/health/ready`` until it answers 200; fail with the log if the
        process dies or the time runs out."""
        return self._wait_for("/v2/health/ready", timeout)

    def wait_live(self, timeout: float = READY_TIMEOUT) -> Reply:
        """Poll ``GET /v2/health/live`` until it answers 200 (the server listens)."""
        return self._wait_for("/v2/health/live", timeout)

    def _wait_for(self, path: str, timeout: float) -> Reply:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"ovmsx exited with {self.process.returncode} before {path} answered:\n"
                    + self.log()
                )
            try:
                reply = self.request("GET", path)
                if reply.status == 200:
                    return reply
            except OSError:
                pass  # not listening yet
            time.sleep(0.1)
        self.kill()
        raise TimeoutError(f"{path} did not answer 200 within {timeout} s:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@contextmanager
def rest_served(
    args: Sequence[str],
    workdir: Path,
    forbidden: Sequence[str] = CRASH_SIGNS,
    environment: Mapping[str, str] | None = None,
) -> Iterator[RestProcess]:
    """A ready server while the block runs; it must then stop on SIGTERM with exit code 0, and
    its log must hold none of ``forbidden``. ``environment``: variables added to the server's."""
    process = RestProcess(args, workdir, environment=environment)
    try:
        process.wait_ready()
        yield process
    finally:
        code = process.stop()
    log = process.log()
    assert code == 0, f"ovmsx exited with {code} on SIGTERM:\n{log}"
    for sign in forbidden:
        assert sign not in log, log
