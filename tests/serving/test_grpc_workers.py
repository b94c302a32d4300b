"""``--grpc_workers N``: N serving processes on one port, run by a supervisor.

What the OS shows is the evidence here: which process holds each accepted connection (from
/proc/net/tcp* and /proc/<pid>/fd), which processes exist, and what their command lines say.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_process import STOP_TIMEOUT, ServerProcess, free_port, write_config

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
WORKERS = 2
# Connections opened to see where they land. The kernel spreads them by a hash of the client's
# port, so all of them landing on one of two workers has odds 2 * 2**-16.
CONNECTIONS = 16
# Each tritonclient client gets a TCP connection of its own: gRPC Python otherwise shares one
# connection among channels with the same target and arguments.
OWN_CONNECTION = [
    ("grpc.use_local_subchannel_pool", 1),
    ("grpc.max_send_message_length", 1 << 30),
    ("grpc.max_receive_message_length", 1 << 30),
]
ALL_SERVING = f"all {WORKERS} workers serving"
STARTED = re.compile(r"worker (\d+) started \(pid (\d+)\)")
TCP_ESTABLISHED = "01"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workers")
    sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "add_one")
    entry = {"name": "add_one", "base_path": str(root / "add_one"), "plugin_config": F32}
    return write_config(root / "config.json", [entry])


def start(config: Path, workdir: Path, *extra: str) -> ServerProcess:
    """A supervisor with WORKERS workers, once every one of them serves."""
    server = ServerProcess(
        ["--config_path", str(config), "--grpc_workers", str(WORKERS), *extra], workdir
    )
    server.wait_ready()
    wait_for(lambda: ALL_SERVING in server.log(), server, f"{ALL_SERVING!r} in the log")
    return server


def wait_for(condition, server: ServerProcess, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            server.kill()
            pytest.fail(f"no {what} after {timeout} s:\n{server.log()}")
        time.sleep(0.1)


def workers(server: ServerProcess) -> dict[int, int]:
    """Worker index -> pid, as the supervisor logged them."""
    return {int(index): int(pid) for index, pid in STARTED.findall(server.log())}


def alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def connection_owners(port: int, pids: list[int]) -> Counter[int]:
    """How many established connections to ``port`` each process holds the socket of."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port and fields[3] == TCP_ESTABLISHED:
                inodes.add(fields[9])
    owners: Counter[int] = Counter()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except FileNotFoundError:
                continue  # closed meanwhile
            if target.startswith("socket:[") and target[8:-1] in inodes:
                owners[pid] += 1
    return owners


def infer_add_one(client: grpcclient.InferenceServerClient, offset: float) -> np.ndarray:
    data = np.arange(10, dtype=np.float32).reshape(1, 10) + offset
    given = grpcclient.InferInput("input", [1, 10], "FP32")
    given.set_data_from_numpy(data)
    return client.infer("add_one", [given]).as_numpy("output") - data


def test_connections_spread_over_both_workers_and_each_answers(
    config: Path, tmp_path: Path
) -> None:
    server = start(config, tmp_path)
    try:
        pids = list(workers(server).values())
        assert len(pids) == WORKERS
        assert server.process.pid not in pids
        clients = [
            grpcclient.InferenceServerClient(server.url, channel_args=OWN_CONNECTION)
            for _ in range(CONNECTIONS)
        ]
        try:
            for offset, client in enumerate(clients):
                assert np.array_equal(infer_add_one(client, offset), np.ones((1, 10)))
            owners = connection_owners(server.port, pids)
        finally:
            for client in clients:
                client.close()
        # Every connection is held by a worker (none by the supervisor), and both hold some.
        assert sum(owners.values()) == CONNECTIONS, owners
        assert set(owners) == set(pids), owners
    finally:
        code = server.stop()
    assert code == 0, server.log()


def test_sigterm_drains_and_stops_every_worker(config: Path, tmp_path: Path) -> None:
    server = start(config, tmp_path)
    pids = list(workers(server).values())
    with grpcclient.InferenceServerClient(server.url) as client:
        assert np.array_equal(infer_add_one(client, 0), np.ones((1, 10)))
    code = server.stop(signal.SIGTERM)
    log = server.log()
    assert code == 0, log
    assert not any(alive(pid) for pid in pids), log
    assert len(re.findall(r"\] \[worker \d pid \d+\] stopped$", log, re.M)) == WORKERS, log
    assert "terminate called" not in log


def test_sigint_stops_every_worker_too(config: Path, tmp_path: Path) -> None:
    server = start(config, tmp_path)
    pids = list(workers(server).values())
    assert server.stop(signal.SIGINT) == 0, server.log()
    assert not any(alive(pid) for pid in pids)


def test_a_worker_that_dies_stops_the_others(config: Path, tmp_path: Path) -> None:
    server = start(config, tmp_path)
    pids = workers(server)
    os.kill(pids[1], signal.SIGKILL)
    try:
        code = server.process.wait(STOP_TIMEOUT)
    finally:
        server.kill()
    log = server.log()
    assert code == 128 + signal.SIGKILL, log
    assert f"worker 1 (pid {pids[1]}) exited with signal SIGKILL; stopping the others" in log
    assert not alive(pids[0]), log


def test_workers_stop_when_the_supervisor_is_killed(config: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"  # its own cache folder: the killed supervisor cannot remove one
    server = start(config, tmp_path, "--cache_dir", str(cache))
    pids = list(workers(server).values())
    server.process.kill()
    server.process.wait()
    wait_for(lambda: not any(alive(pid) for pid in pids), server, "workers gone")


def test_workers_share_one_model_cache(config: Path, tmp_path: Path) -> None:
    """Without --cache_dir the supervisor makes a cache folder for its workers, and removes it
    at exit; every worker is told to use it."""
    server = start(config, tmp_path)
    try:
        folders = set()
        for pid in workers(server).values():
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            folders.add(argv[argv.index("--cache_dir") + 1])
        (folder,) = folders
        assert list(Path(folder).glob("*.blob")), "the first worker's compiled model is cached"
    finally:
        assert server.stop() == 0, server.log()
    assert not Path(folder).exists()


def test_a_given_cache_dir_is_used_and_kept(config: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    server = start(config, tmp_path, "--cache_dir", str(cache))
    assert server.stop() == 0, server.log()
    assert list(cache.glob("*.blob"))


def run_ovmsx(args: list[str], workdir: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "ovmsx", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("taken", ["--port", "--rest_port"])
def test_a_taken_port_is_refused_before_any_worker_starts(
    config: Path, tmp_path: Path, taken: str
) -> None:
    with socket.socket() as taker:
        # SO_REUSEPORT on the listener: the workers' own sockets could join it unnoticed.
        taker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        taker.bind(("127.0.0.1", 0))
        taker.listen()
        port = taker.getsockname()[1]
        other = "--rest_port" if taken == "--port" else "--port"
        args = ["--config_path", str(config), taken, str(port), other, str(free_port())]
        args += ["--grpc_bind_address", "127.0.0.1", "--rest_bind_address", "127.0.0.1"]
        args += ["--grpc_workers", str(WORKERS)]
        code, out = run_ovmsx(args, tmp_path)
    assert code == 1, out
    assert f"Failed to bind to address 127.0.0.1:{port}: the port is in use" in out
    assert "worker 0 started" not in out


def test_more_workers_than_cores_is_a_usage_error(config: Path, tmp_path: Path) -> None:
    cores = os.cpu_count() or 1
    args = ["--config_path", str(config), "--port", str(free_port())]
    code, out = run_ovmsx([*args, "--grpc_workers", str(cores + 1)], tmp_path)
    assert code == 64, out
    assert f"grpc_workers count should be from 1 to CPU core count : {cores}" in out
