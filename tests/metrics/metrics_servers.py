"""What the metrics tests serve, and how they read ``/metrics``.

The servables: ``add_one`` (FP32 [1,10] + 1), ``add_two`` (a pipeline running add_one twice),
``per_row`` (a pipeline running add_one on each row of its input), ``echo`` (a graph whose
Python node returns its input), ``failing`` (a graph whose node always fails). A server runs in
this process (``InProcessServer``: the registry, metrics and gRPC server ovmsx's ``serve``
builds, on a loop of its own) so that tests read its exposition directly, or as the ``ovmsx``
command (``serving_process.ServerProcess``) when the test is about the command line.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
import threading
from collections.abc import Iterable
from pathlib import Path

import serving_models as sm
from prometheus_client.parser import text_string_to_metric_families

from ovmsx.config import load_config
from ovmsx.frontend.grpc_server import create_server
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.frontend.request_observer import RequestObserver
from ovmsx.metrics.serving_metrics import ServingMetrics
from ovmsx.metrics.settings import MetricsSettings
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry

F32 = {"INFERENCE_PRECISION_HINT": "f32"}

ECHO_GRAPH = """
input_stream: "OVMS_PY_TENSOR:input"
output_stream: "OVMS_PY_TENSOR:output"
node {
  name: "echo"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT:input"
  output_stream: "OUTPUT:output"
  node_options: {
    [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: { handler_path: "echo.py" }
  }
}
"""

ECHO_HANDLER = """
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs):
        return [Tensor("output", inputs[0])]
"""

# A graph whose node fails every request it accepts.
FAILING_HANDLER = """
class OvmsPythonModel:
    def execute(self, inputs):
        raise RuntimeError("this node always fails")
"""


def _model_node(name: str, source: tuple[str, str], alias: str) -> dict:
    return {
        "name": name,
        "type": "DL model",
        "model_name": "add_one",
        "inputs": [{"input": {"node_name": source[0], "data_item": source[1]}}],
        "outputs": [{"data_item": "output", "alias": alias}],
    }


def write_config(root: Path, monitoring: dict | None = None, **models: dict) -> Path:
    """add_one, add_two, echo and failing in ``root``; ``models`` adds settings to add_one's
    entry."""
    if not (root / "add_one").exists():
        sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "add_one")
        for name, handler in (("echo", ECHO_HANDLER), ("failing", FAILING_HANDLER)):
            folder = root / name
            folder.mkdir()
            (folder / "graph.pbtxt").write_text(ECHO_GRAPH)
            (folder / "echo.py").write_text(textwrap.dedent(handler))
    add_two = {
        "name": "add_two",
        "inputs": ["input"],
        "nodes": [
            _model_node("first", ("request", "input"), "once"),
            _model_node("second", ("first", "once"), "twice"),
        ],
        "outputs": [{"output": {"node_name": "second", "data_item": "twice"}}],
    }
    per_row = {  # the request's first dimension split: add_one runs once per row
        "name": "per_row",
        "inputs": ["rows"],
        "demultiply_count": -1,
        "nodes": [_model_node("one", ("request", "rows"), "row")],
        "outputs": [{"rows_plus_one": {"node_name": "one", "data_item": "row"}}],
    }
    add_one = {"name": "add_one", "base_path": str(root / "add_one"), "plugin_config": F32}
    config = {
        "model_config_list": [{"config": add_one | models}],
        "pipeline_config_list": [add_two, per_row],
        "mediapipe_config_list": [
            {"name": name, "base_path": str(root / name)} for name in ("echo", "failing")
        ],
    }
    if monitoring is not None:
        config["monitoring"] = monitoring
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path


class InProcessServer:
    """A gRPC server on a free loopback port with metrics on, serving ``config``."""

    def __init__(self, config: Path, families: Iterable[str]) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.metrics = ServingMetrics(MetricsSettings(frozenset(families)))
        self.url = self._run(self._start(config))

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(120)

    async def _start(self, path: Path) -> str:
        config = load_config(path)
        self._dispatcher = InferenceDispatcher(asyncio.get_running_loop())
        self.registry = ServableRegistry(self._dispatcher)
        self.registry.metrics = self.metrics
        service = KServeService(self.registry, RequestObserver(self.registry, self.metrics))
        self._server, port = create_server(service, ["127.0.0.1"], 0)
        await self._server.start()
        await self.registry.load(config.models, config.graphs, config.pipelines, config.libraries)
        return f"127.0.0.1:{port}"

    def exposition(self) -> tuple[bytes, str]:
        """``GET /metrics``'s body and content type, read on the server's loop as REST does."""
        return self._run(self._on_loop(self.metrics.exposition))

    def on_loop(self, function):
        """``function()`` run on the server's loop (where servables load and unload)."""
        return self._run(self._on_loop(function))

    @staticmethod
    async def _on_loop(function):
        return function()

    def stop(self) -> None:
        async def stop() -> None:
            await self._server.stop(grace=10)
            await self.registry.unload()
            self._dispatcher.close()
            self.metrics.close()

        self._run(stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of an exposition: (sample name, its labels) -> value, parsed by
    prometheus-client's own parser (counters come back with ``_total``)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(found: dict, sample: str, /, **labels: str) -> float:
    """The value of one sample; KeyError (naming what exists) when it is absent."""
    key = (sample, frozenset(labels.items()))
    if key not in found:
        near = sorted(str(dict(k[1])) for k in found if k[0] == sample)
        raise KeyError(f"{sample}{labels} not exposed; {sample} has: {near}")
    return found[key]
