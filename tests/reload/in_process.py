"""ovmsx's gRPC server, registry and config service in this process, on a loop of their own:
tests call the config API (``ConfigService``: what ``GET /v1/config`` and
``POST /v1/config/reload`` call) and one poller cycle directly, and infer with tritonclient."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
from reload_world import X
from tritonclient.utils import InferenceServerException

from ovmsx.config.config_source import read_config
from ovmsx.config_api import ConfigService
from ovmsx.frontend.grpc_server import create_server
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.frontend.request_observer import RequestObserver
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry

TIMEOUT = 120


class InProcess:
    def __init__(self, config: Path) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.url = self.run(self._start(config))
        self.client = grpcclient.InferenceServerClient(self.url)

    def run(self, coroutine):
        """``coroutine`` run to its end on the server's loop."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(TIMEOUT)

    def submit(self, coroutine):
        """``coroutine`` started on the server's loop; its concurrent future."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    async def _start(self, path: Path) -> str:
        read = read_config(path)
        assert read.servables is not None, read.error
        self._dispatcher = InferenceDispatcher(asyncio.get_running_loop())
        self.registry = ServableRegistry(self._dispatcher)
        self.config = ConfigService(self.registry, path, read.servables, read.md5)
        service = KServeService(self.registry, RequestObserver(self.registry, None))
        self._server, port = create_server(service, ["127.0.0.1"], 0)
        await self._server.start()
        await self.config.load_initial()
        return f"127.0.0.1:{port}"

    # -- the config API and the poller ------------------------------------------------------

    def status(self) -> tuple[int, bytes]:
        return self.run(self.config.status())

    def reload(self) -> tuple[int, bytes]:
        return self.run(self.config.reload())

    def poll(self) -> None:
        self.run(self.config.poll())

    # -- inference --------------------------------------------------------------------------

    def infer(
        self, name: str, version: str = "", data: np.ndarray = X, input_name: str = "input"
    ) -> np.ndarray:
        """The first output of ``name`` for ``data`` (models: ``output``; pipelines: ``out``)."""
        given = grpcclient.InferInput(input_name, list(data.shape), "FP32")
        given.set_data_from_numpy(data)
        result = self.client.infer(name, [given], model_version=version)
        return result.as_numpy(result.get_response().outputs[0].name)

    def refused(self, name: str, version: str = "", input_name: str = "input") -> str:
        """The error message of an inference that must fail."""
        try:
            self.infer(name, version, input_name=input_name)
        except InferenceServerException as error:
            return error.message()
        raise AssertionError(f"{name} version {version!r} answered")

    def stop(self) -> None:
        self.client.close()

        async def stop() -> None:
            await self._server.stop(grace=10)
            await self.config.close()
            await self.registry.unload()
            self._dispatcher.close()

        self.run(stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()
