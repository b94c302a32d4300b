"""Where ovmsx listens: on every interface by default (0.0.0.0, as OVMS), only on loopback with
``--grpc_bind_address 127.0.0.1 --rest_bind_address 127.0.0.1``. Checked from the server's
own sockets (psutil), and by connecting to this machine's other addresses when it has any."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
from rest_process import send
from serving_process import free_port, wait_until

EVERY_INTERFACE = {"0.0.0.0", "::"}
LOOPBACK = ["--grpc_bind_address", "127.0.0.1", "--rest_bind_address", "127.0.0.1"]


def _other_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback (possibly none)."""
    return [
        address.address
        for addresses in psutil.net_if_addrs().values()
        for address in addresses
        if address.family == socket.AF_INET and not address.address.startswith("127.")
    ]


def _listening(pid: int, port: int) -> set[str]:
    """The addresses process ``pid`` listens on at ``port`` (gRPC listens on an IPv6 socket
    taking IPv4 too: its 127.0.0.1 shows as ``::ffff:127.0.0.1``)."""
    return {
        c.laddr.ip.removeprefix("::ffff:")
        for c in psutil.Process(pid).connections(kind="inet")
        if c.status == psutil.CONN_LISTEN and c.laddr.port == port
    }


def _reachable(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=10):
            return True
    except ConnectionRefusedError:
        return False


def _ready(port: int) -> bool:
    try:
        return send(port, "GET", "/v2/health/ready").status == 200
    except OSError:
        return False


@contextmanager
def _server(config: Path, workdir: Path, bind: list[str]) -> Iterator[tuple[int, int, int]]:
    """ovmsx on ``config`` with ``bind`` as its only address flags: (pid, gRPC, REST port)."""
    port, rest_port = free_port(), free_port()
    command = [sys.executable, "-m", "ovmsx", "--config_path", str(config)]
    command += ["--port", str(port), "--rest_port", str(rest_port), *bind]
    with (workdir / "server.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=workdir, stdout=log, stderr=log)
    try:
        wait_until(lambda: process.poll() is not None or _ready(rest_port), "the server")
        assert process.poll() is None, (workdir / "server.log").read_text()
        yield process.pid, port, rest_port
    finally:
        process.terminate()
        code = process.wait(60)
    assert code == 0, (workdir / "server.log").read_text()


def test_by_default_both_ports_listen_on_every_interface(servables: Path, tmp_path: Path) -> None:
    with _server(servables, tmp_path, []) as (pid, port, rest_port):
        for listening in (port, rest_port):
            addresses = _listening(pid, listening)
            assert addresses, f"nothing listens on {listening}"
            assert addresses <= EVERY_INTERFACE, addresses
            for address in ["127.0.0.1", *_other_addresses()]:
                assert _reachable(address, listening), address


def test_bound_to_loopback_the_ports_are_unreachable_from_other_addresses(
    servables: Path, tmp_path: Path
) -> None:
    with _server(servables, tmp_path, LOOPBACK) as (pid, port, rest_port):
        for listening in (port, rest_port):
            assert _listening(pid, listening) == {"127.0.0.1"}
            assert _reachable("127.0.0.1", listening)
            for address in _other_addresses():
                assert not _reachable(address, listening), address
