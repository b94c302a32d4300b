"""A server stopped while it is busy exits cleanly, every time.

SIGTERM once ended a server right after a load run with ``terminate called after throwing an
instance of 'std::runtime_error' ... pybind11_object_dealloc(): Tried to deallocate unregistered
instance!``. A thread still inside a pybind11 call when Python finalizes ends that way: CPython
ends a thread that asks for the GIL back during finalization, unwinding its C++ frames (and the
Python references they hold) without the GIL. So a stop must end every thread ovmsx started
before the interpreter finalizes (ovmsx/server.py), and the server reports any it finds left
(ovmsx/cli.py). Here the server is started, loaded with requests in flight on a model, a graph
with an OpenVINO node, a graph of Python nodes and a pipeline, and stopped mid-load, many times
over, with one process and with two (``--grpc_workers 2``).
"""

from __future__ import annotations

import json
import signal
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import serving_graphs as sg
import serving_graphs_openvino as sgo
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_process import ServerProcess

STOPS = 10
ANSWERED_BEFORE_STOP = 200  # requests answered before the signal: the server is warm and busy
IN_FLIGHT = 16  # per client
CLIENTS = 3
DATA = np.arange(10, dtype=np.float32).reshape(1, 10)
# What a broken stop leaves in the log; the last is ovmsx's own check that every thread it
# started has ended before the interpreter finalizes (ovmsx/cli.py).
CRASH_SIGNS = (
    "terminate called",
    "Fatal Python error",
    "Traceback",
    "Segmentation fault",
    "threads still running at exit",
)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("busy")
    sm.save(sgo.plus(1), root / "models" / "dummy")
    graphs = {"dummy_full": sgo.model_graph(), "increment": sg.GOOD_GRAPHS["increment"]}
    for name, text in graphs.items():
        (root / name).mkdir()
        (root / name / "graph.pbtxt").write_text(text)
    (root / "increment" / "increment.py").write_text(textwrap.dedent(sg.HANDLERS["increment.py"]))
    dummy = {"name": "dummy", "base_path": str(root / "models" / "dummy"), "plugin_config": sgo.F32}
    config = {
        "model_config_list": [{"config": dummy}],
        "mediapipe_config_list": [{"name": name} for name in graphs],
        "pipeline_config_list": [sgo.dummy_twice()],
    }
    path = root / "config.json"
    path.write_text(json.dumps(config))
    return path


def _input(name: str) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, [1, 10], "FP32")
    given.set_data_from_numpy(DATA)
    return given


# servable -> (its inputs, its output, what it adds)
REQUESTS = {
    "dummy": ([_input("b")], "a", 1),
    "dummy_full": ([_input("in")], "out", 1),
    "increment": ([_input("first_number")], "last_number", 3),
    sgo.PIPELINE: ([_input("numbers")], "result", 2),
}


class Load:
    """Clients keeping IN_FLIGHT requests each in flight until stopped; counts right answers."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.answered = 0
        self.wrong: list[str] = []
        self._lock = threading.Lock()
        self._enough = threading.Event()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._client) for _ in range(CLIENTS)]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def wait_busy(self, timeout: float = 60.0) -> bool:
        return self._enough.wait(timeout)

    def _client(self) -> None:
        slots = threading.Semaphore(IN_FLIGHT)
        with grpcclient.InferenceServerClient(self.url) as client:
            while not self._stop.is_set():
                for name, (inputs, output, added) in REQUESTS.items():
                    if not slots.acquire(timeout=1):
                        continue  # the server has stopped answering: check _stop again
                    callback = self._answered(slots, name, output, added)
                    try:
                        client.async_infer(name, inputs, callback)
                    except Exception:  # the channel is closing
                        slots.release()
            for _ in range(IN_FLIGHT):  # the last answers (or errors) before closing
                slots.acquire(timeout=10)

    def _answered(self, slots: threading.Semaphore, name: str, output: str, added: int):
        def done(result, error) -> None:
            slots.release()
            if error is not None:
                return  # refused or cut off by the stop: expected once the signal is sent
            got = result.as_numpy(output)
            with self._lock:
                if got is None or not np.array_equal(got, DATA + added):
                    self.wrong.append(f"{name}: {got!r}")
                self.answered += 1
                if self.answered >= ANSWERED_BEFORE_STOP:
                    self._enough.set()

        return done


@contextmanager
def started(config: Path, workdir: Path, workers: int) -> Iterator[ServerProcess]:
    server = ServerProcess(["--config_path", str(config), "--grpc_workers", str(workers)], workdir)
    try:
        server.wait_ready()
        yield server
    finally:
        server.kill()  # only if a failed assertion left it running


def test_sigterm_under_load_always_exits_cleanly(config: Path, tmp_path: Path) -> None:
    for stop in range(STOPS):
        workers = 1 + stop % 2
        with started(config, tmp_path, workers) as server, Load(server.url) as load:
            assert load.wait_busy(), f"stop {stop}: no load reached the server:\n{server.log()}"
            code = server.stop(signal.SIGTERM)
        log = server.log()
        assert code == 0, f"stop {stop} ({workers} worker(s)): exit {code}\n{log}"
        for sign in CRASH_SIGNS:
            assert sign not in log, f"stop {stop} ({workers} worker(s)):\n{log}"
        assert not load.wrong, load.wrong[:5]
