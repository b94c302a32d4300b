"""Every servable call over REST is reported once to the context's observer, with its method,
servable, version, kind, outcome and time (the hook metrics and request logs use).

The server runs in this process (registry, RestApp and RestServer on a loop of their own) so
that the test reads what its observer recorded; requests still go over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rest_process import HOST, send

from ovmsx.config import load_config
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.frontend.request_observer import RequestObserver
from ovmsx.frontend.rest_app import RestApp
from ovmsx.frontend.rest_context import RestContext
from ovmsx.frontend.rest_server import RestServer
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry

ONES = {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32", "data": [1] * 10}]}


class Recorder(RequestObserver):
    """The server's own observer (it names what a failed call reached), keeping each report
    instead of counting it."""

    def __init__(self, registry: ServableRegistry) -> None:
        super().__init__(registry, None)
        self.calls: list[tuple] = []

    def finished(self, interface, method, name, version, kind, ok, seconds, error=None) -> None:
        self.calls.append((interface, method, name, version, kind, ok, seconds))


class InProcessRest:
    def __init__(self, config: Path) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.port = self._run(self._start(config))

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(120)

    async def _start(self, path: Path) -> int:
        config = load_config(path)
        self._dispatcher = InferenceDispatcher(asyncio.get_running_loop())
        self._registry = ServableRegistry(self._dispatcher)
        await self._registry.load(config.models, config.graphs, config.pipelines)
        self.recorder = Recorder(self._registry)
        service = KServeService(self._registry)
        context = RestContext(self._registry, service, observer=self.recorder)
        self._server = RestServer(RestApp(context), HOST, 0)
        await self._server.start()
        return self._server.port

    async def _stop(self) -> None:
        await self._server.stop(grace=5)
        await self._registry.unload()
        self._dispatcher.close()

    def close(self) -> None:
        self._run(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@pytest.fixture(scope="module")
def served(rest_config: Path) -> Iterator[tuple[InProcessRest, Recorder]]:
    server = InProcessRest(rest_config)
    yield server, server.recorder
    server.close()


def _last(recorder: Recorder, request) -> tuple:
    before = len(recorder.calls)
    request()
    assert len(recorder.calls) == before + 1, recorder.calls[before:]
    *call, ok, seconds = recorder.calls[-1]
    assert seconds > 0 if ok else seconds == 0  # only successes are timed
    return (*call, ok)


def test_infer_calls_are_reported(served) -> None:
    server, recorder = served

    def infer(name: str, document: object, version: str = ""):
        path = f"/v2/models/{name}" + (f"/versions/{version}" if version else "") + "/infer"
        return lambda: send(server.port, "POST", path, json.dumps(document))

    assert _last(recorder, infer("add_one", ONES)) == (
        "REST", "ModelInfer", "add_one", "1", "model", True,
    )  # fmt: skip
    assert _last(recorder, infer("versioned", ONES, "1")) == (
        "REST", "ModelInfer", "versioned", "1", "model", True,
    )  # fmt: skip
    assert _last(recorder, infer("add_two", ONES)) == (
        "REST", "ModelInfer", "add_two", "1", "pipeline", True,
    )  # fmt: skip
    echo = {"inputs": [{"name": "in", "shape": [1], "datatype": "INT8", "data": [1]}]}
    assert _last(recorder, infer("echo", echo)) == (
        "REST", "ModelInfer", "echo", "1", "graph", True,
    )  # fmt: skip
    bad = {"inputs": [{"name": "input", "shape": [1, 9], "datatype": "FP32", "data": [1] * 9}]}
    assert _last(recorder, infer("add_one", bad, "1")) == (
        "REST", "ModelInfer", "add_one", "1", "model", False,
    )  # fmt: skip
    assert _last(recorder, infer("nothing", ONES)) == (
        "REST", "ModelInfer", "nothing", "", None, False,
    )  # fmt: skip
    malformed = lambda: send(server.port, "POST", "/v2/models/add_one/infer", b"{")  # noqa: E731
    assert _last(recorder, malformed) == ("REST", "ModelInfer", "add_one", "", "model", False)


def test_metadata_and_ready_calls_are_reported(served) -> None:
    server, recorder = served

    def get(path: str):
        return lambda: send(server.port, "GET", path)

    assert _last(recorder, get("/v2/models/add_two")) == (
        "REST", "ModelMetadata", "add_two", "", "pipeline", True,
    )  # fmt: skip
    assert _last(recorder, get("/v2/models/echo/versions/1/ready")) == (
        "REST", "ModelReady", "echo", "1", "graph", True,
    )  # fmt: skip
    assert _last(recorder, get("/v2/models/add_one/versions/9")) == (
        "REST", "ModelMetadata", "add_one", "9", "model", False,
    )  # fmt: skip


def test_other_endpoints_are_not_servable_calls(served) -> None:
    server, recorder = served
    before = len(recorder.calls)
    for path in ("/v2", "/v2/health/live", "/v2/health/ready", "/nope", "/metrics"):
        send(server.port, "GET", path)
    assert recorder.calls[before:] == []
