"""Clients keep asking while the config changes under them: a running ``ovmsx`` process with its
file poller on, 8 clients sending for 12 s while the files change 10 times (versions added and
removed, models added and removed, a graph's handler edited). Requests to servables that remain
never fail: new versions and definitions are built beside the ones serving, then swapped."""

from __future__ import annotations

import os
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from reload_world import ADDER, World, X
from rest_process import RestProcess
from tritonclient.utils import InferenceServerException

CLIENTS = 8  # half on the model that stays, half on the graph that is edited
# A change a little over every poll (1 s): each is applied, and every client answered, before
# the next; the long soak under reloads is bench/soak.py's.
DURATION = 12.0
CHANGES = 10
APPLIED_WITHIN = 20.0  # seconds for the poller (every second) to apply one change


class Clients:
    """``CLIENTS`` threads, each with its own connection, asking until stopped. An answer must be
    the input plus one constant (which version or handler served it may change at any time)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._stop = threading.Event()
        self.failures: list[str] = []
        self.answered = [0] * CLIENTS
        self._threads = [threading.Thread(target=self._ask, args=(i,)) for i in range(CLIENTS)]
        for thread in self._threads:
            thread.start()

    def _ask(self, index: int) -> None:
        name = ("stays", "graph")[index % 2]
        given = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
        with grpcclient.InferenceServerClient(self._url) as connection:
            while not self._stop.is_set():
                try:
                    result = connection.infer(name, [given]).as_numpy("output")
                except InferenceServerException as error:  # every one is a failure to report
                    self.failures.append(f"{name}: {error}")
                    continue
                added = result - X
                if not np.all(added == added[0, 0]):
                    self.failures.append(f"{name}: {result}")
                self.answered[index] += 1

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)


def _answer(client: grpcclient.InferenceServerClient, name: str) -> float | None:
    """What ``name`` adds to its input now; None if it does not answer."""
    given = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
    try:
        return float(client.infer(name, [given]).as_numpy("output")[0, 0] - X[0, 0])
    except InferenceServerException:
        return None


def _add_version(world: World, name: str, version: int, add: float) -> None:
    """A version folder appears whole (renamed into place), as a deployment would copy it."""
    staging = world.root / "staging" / name
    sm.save(sm.add_constant([1, 10], add, name), staging, version)
    os.rename(staging / str(version), world.root / "models" / name / str(version))


def _edit_handler(world: World, add: int) -> None:
    staged = world.root / "adder.py.new"
    staged.write_text(textwrap.dedent(ADDER.format(add=add)))
    os.replace(staged, world.root / "graphs" / "graph" / "adder.py")


def _changes(world: World) -> list[tuple[str, Callable[[], None], str, float | None]]:
    """(what, change, servable to watch, what it then adds; None: it no longer answers)."""

    def retire(name: str) -> None:
        del world.models[name]
        world.write()

    def add_model(name: str, add: float) -> None:
        world.add_model(name, {1: add})
        world.write()

    return [
        ("version 2 added", lambda: _add_version(world, "stays", 2, 2.0), "stays", 2.0),
        ("version 2 removed", lambda: world.remove_version("stays", 2), "stays", 1.0),
        ("model added", lambda: add_model("added", 3.0), "added", 3.0),
        ("graph edited", lambda: _edit_handler(world, 4), "graph", 4.0),
        ("version 3 added", lambda: _add_version(world, "stays", 3, 3.0), "stays", 3.0),
        ("model removed", lambda: retire("added"), "added", None),
        ("graph edited again", lambda: _edit_handler(world, 5), "graph", 5.0),
        ("version 3 removed", lambda: world.remove_version("stays", 3), "stays", 1.0),
        ("another model added", lambda: add_model("second", 6.0), "second", 6.0),
        ("graph edited a third time", lambda: _edit_handler(world, 6), "graph", 6.0),
    ]


def test_servables_that_remain_never_fail(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.add_model("stays", {1: 1.0})
    world.graph_folder("graph", add=1)
    world.add_graph("graph")
    world.write()
    server = RestProcess(
        ["--config_path", str(world.config), "--file_system_poll_wait_seconds", "1"], tmp_path
    )
    server.wait_ready()
    url = f"127.0.0.1:{server.port}"
    changes = _changes(world)
    assert len(changes) == CHANGES
    clients = Clients(url)
    probe = grpcclient.InferenceServerClient(url)
    start = time.monotonic()
    try:
        for index, (what, change, name, expected) in enumerate(changes):
            # Spread over DURATION: change i happens at i * DURATION / CHANGES.
            time.sleep(max(0.0, start + index * DURATION / CHANGES - time.monotonic()))
            before = list(clients.answered)
            change()
            deadline = time.monotonic() + APPLIED_WITHIN
            while _answer(probe, name) != expected:
                assert not clients.failures, clients.failures[:5]
                if time.monotonic() > deadline:
                    pytest.fail(f"{what}: not applied in {APPLIED_WITHIN} s\n{server.log()}")
                time.sleep(0.05)
            # Every client was answered while (or after) this change applied.
            while any(now == then for now, then in zip(clients.answered, before, strict=True)):
                assert time.monotonic() < deadline, f"{what}: clients stalled {clients.answered}"
                time.sleep(0.01)
        time.sleep(max(0.0, start + DURATION - time.monotonic()))
    finally:
        clients.stop()
        probe.close()
        code = server.stop()
    assert not clients.failures, clients.failures[:5]
    assert code == 0, server.log()
    assert min(clients.answered) > 0, clients.answered
