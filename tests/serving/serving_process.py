"""Runs the real ``ovmsx`` server as a subprocess on a free loopback port."""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 40.0


# Servers get ports below Linux's ephemeral range (32768 and up), so no port the OS hands out
# (to a client's connection, or to another process's bind to port 0) is ever one a server is
# about to bind; each pytest-xdist worker walks a block of its own, so two workers never pick
# the same port, and a worker never picks one it used shortly before.
_PORT_BLOCK = 2000
_FIRST_PORT = 20000  # six blocks fit below 32768


def _block() -> int:
    """0 without pytest-xdist; 1, 2, ... for its workers gw0, gw1, ..."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    return (int(name[2:]) + 1) % 6 if name.startswith("gw") and name[2:].isdigit() else 0


_block_start = _FIRST_PORT + _PORT_BLOCK * _block()
_next_ports = itertools.cycle(range(_block_start, _block_start + _PORT_BLOCK))


def free_port() -> int:
    """A loopback port nobody listens on right now, from this process's own block."""
    for _ in range(_PORT_BLOCK):
        port = next(_next_ports)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:  # taken, or still in TIME_WAIT
                continue
            return port
    raise RuntimeError(f"no free port in {_block_start}-{_block_start + _PORT_BLOCK - 1}")


def write_config(path: Path, models: Sequence[dict]) -> Path:
    """A ``config.json`` with one ``{"config": ...}`` entry per model dict."""
    path.write_text(json.dumps({"model_config_list": [{"config": m} for m in models]}, indent=1))
    return path


class ServerProcess:
    """``ovmsx <args> --port P --grpc_bind_address 127.0.0.1``, its log in ``workdir``.

    The working directory is ``workdir`` so that ``-m ovmsx`` finds the installed package, not
    a source tree that happens to be the current directory.
    """

    def __init__(
        self, args: Sequence[str], workdir: Path, environment: Mapping[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.url = f"127.0.0.1:{self.port}"
        self.log_path = workdir / f"server-{self.port}.log"
        self.rest_port: int | None = None  # set by ``served(rest=True)``
        command = [sys.executable, "-m", "ovmsx", *args]
        command += ["--port", str(self.port), "--grpc_bind_address", "127.0.0.1"]
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

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Poll ServerReady until it is true; fail with the log if the process dies or hangs."""
        deadline = time.monotonic() + timeout
        with grpcclient.InferenceServerClient(self.url) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(
                        f"ovmsx exited with {self.process.returncode} before it was ready:\n"
                        + self.log()
                    )
                try:
                    if client.is_server_ready(client_timeout=2):
                        return
                except InferenceServerException:
                    pass  # not listening yet
                time.sleep(0.1)
        self.kill()
        raise TimeoutError(f"ovmsx was not ready after {timeout} s:\n{self.log()}")

    def cpu_seconds(self) -> float:
        """CPU time the server has used so far (user + system, from /proc)."""
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> int:
        """Send ``sig`` and wait for the exit code."""
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


def run_to_exit(args: Sequence[str], workdir: Path, timeout: float = 60.0) -> tuple[int, str]:
    """Run ``ovmsx <args>`` expecting it to exit on its own; returns (exit code, stdout+stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "ovmsx", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@contextmanager
def served(
    config: Path,
    workdir: Path,
    args: Sequence[str] = (),
    environment: Mapping[str, str] | None = None,
    rest: bool = False,
) -> Iterator[ServerProcess]:
    """A server on ``config`` while the block runs; it must then stop on SIGTERM with 0.
    With ``rest``, it also serves REST on a free port, ``process.rest_port``."""
    rest_port = free_port() if rest else None
    if rest_port is not None:
        args = [*args, "--rest_port", str(rest_port)]
    process = ServerProcess(["--config_path", str(config), *args], workdir, environment)
    process.rest_port = rest_port
    try:
        process.wait_ready()
        yield process
    finally:
        code = process.stop()
    assert code == 0, f"ovmsx exited with {code} on SIGTERM:\n{process.log()}"


def wait_until(
    condition: Callable[[], object],
    what: str,
    timeout: float = 30.0,
    log: Callable[[], str] | None = None,
) -> None:
    """Poll ``condition`` until it holds. The timeout only stops a hung test (it asserts no
    timing); the failure names ``what`` and, given ``log``, shows the server's log."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}" + (f"\n{log()}" if log else ""))
        time.sleep(0.02)


def rss_bytes(pid: int) -> int:
    """A process's resident set size (``VmRSS`` of /proc/<pid>/status)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS in /proc/{pid}/status")
