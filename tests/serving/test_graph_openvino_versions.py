"""Which model version a graph's session runs: ``servable_version`` parsed as OVMS does, the
default re-resolved at every inference (COMPAT §12.1)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from graph_streams import tensor_input
from serving_graphs_openvino import (
    VERSION_GRAPHS,
    model_graph,
    plus,
    versioned_model,
    write_graphs,
    write_version_graphs,
)
from serving_process import ServerProcess, served
from tritonclient.utils import InferenceServerException

from ovmsx.config.server_config import load_config
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.kserve_codec import decode_infer_request
from ovmsx.frontend.kserve_graph import GraphStream, infer_graph
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry

X = np.arange(10, dtype=np.float32).reshape(1, 10)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[grpcclient.InferenceServerClient]:
    config = write_version_graphs(tmp_path_factory.mktemp("version_graphs"))
    server: ServerProcess
    with (
        served(config, tmp_path_factory.mktemp("version_srv")) as server,
        grpcclient.InferenceServerClient(server.url) as triton,
    ):
        yield triton


@pytest.mark.parametrize(
    ("graph", "added"),
    [
        ("version_absent", 2),  # no servable_version: the highest available version
        ("version_1", 1),
        ("version_2", 2),
        ("version_zero", 2),  # 0 is the default version
        ("version_spaces", 1),  # spaces are dropped
        ("version_negative", 2),  # anything that is not a uint32 means the default
        ("version_text", 2),
        ("version_over_uint32", 2),
        ("version_huge", 2),
    ],
)
def test_servable_version_picks_the_model_version(client, graph, added) -> None:
    result = client.infer(graph, [tensor_input("in", X)])
    np.testing.assert_array_equal(result.as_numpy("out"), X + added)


@pytest.mark.parametrize("graph", ["version_missing", "version_uint32_max"])
def test_explicit_version_not_on_disk_fails_each_request(client, graph) -> None:
    number = int(VERSION_GRAPHS[graph])
    with pytest.raises(InferenceServerException) as caught:
        client.infer(graph, [tensor_input("in", X)])
    assert caught.value.status() == "StatusCode.UNKNOWN"
    assert caught.value.message() == (
        "Mediapipe graph precondition failed - FAILED_PRECONDITION: Calculator::Open() for node "
        '"session" failed: OpenVINOModelServerSessionCalculator failed to load the model '
        f"(versioned: Model with requested version is not found - model versioned version {number})"
    )


# -- a version added while the graph serves (in-process: the server cannot reload yet) ------------


def _request(graph: str, data: np.ndarray) -> bytes:
    request = pb.ModelInferRequest(model_name=graph)
    request.inputs.add(name="in", datatype="FP32", shape=list(data.shape))
    request.raw_input_contents.append(data.tobytes())
    return request.SerializeToString()


def _out(answer: pb.ModelInferResponse, shape: tuple[int, ...]) -> np.ndarray:
    assert [o.name for o in answer.outputs] == ["out"]
    return np.frombuffer(answer.raw_output_contents[0], np.float32).reshape(shape)


async def _ask(registry: ServableRegistry, graph: str, data: np.ndarray) -> np.ndarray:
    """One ModelInfer call, as the KServe service makes it."""
    request = decode_infer_request(_request(graph, data))
    answer = await infer_graph(registry.graphs[graph], request, registry.graph_workers)
    return _out(pb.ModelInferResponse.FromString(answer), data.shape)


class _OpenStream:
    """One ModelStreamInfer call kept open: a graph instance whose session opened once."""

    def __init__(self, registry: ServableRegistry, graph: str, data: np.ndarray) -> None:
        self._graph = graph
        self._later: asyncio.Queue[bytes | None] = asyncio.Queue()
        first = decode_infer_request(_request(graph, data))
        stream = GraphStream(registry.graphs[graph], first, registry.graph_workers)
        self._answers = stream.responses(self._requests())

    async def _requests(self) -> AsyncIterator[bytes]:
        while (message := await self._later.get()) is not None:
            yield message

    async def answer(self) -> np.ndarray:
        message = await anext(self._answers)
        assert isinstance(message, bytes), message
        return _out(pb.ModelStreamInferResponse.FromString(message).infer_response, X.shape)

    def send(self, data: np.ndarray) -> None:
        self._later.put_nowait(_request(self._graph, data))

    async def close(self) -> list:
        self._later.put_nowait(None)
        return [message async for message in self._answers]


async def _grow(root: Path) -> dict[str, list[np.ndarray]]:
    """Serve graphs over model "growing" (version 1), add version 2, ask before and after:
    each graph with a new request each time, and "follows" also on one stream kept open."""
    models = root / "models"
    entry = versioned_model(models, "growing", (1,))
    graphs = {"follows": model_graph("growing", None), "pinned": model_graph("growing", "1")}
    config = load_config(write_graphs(root, graphs, [entry]))
    # As ovmsx/server.py builds it: the dispatcher on the running loop, then the registry.
    dispatcher = InferenceDispatcher(asyncio.get_running_loop())
    registry = ServableRegistry(dispatcher)
    answers: dict[str, list[np.ndarray]] = {"follows": [], "pinned": [], "stream": []}
    try:
        await registry.load(config.models, config.graphs)
        loaded = {name: (registry.graphs[name], registry.graphs[name].plan) for name in graphs}
        stream = _OpenStream(registry, "follows", X)
        answers["stream"].append(await stream.answer())
        for name in graphs:
            answers[name].append(await _ask(registry, name, X))
        sm.save(plus(2), models / "growing", 2)
        (model_config,) = config.models
        version = await registry.load_version(model_config, 2, models / "growing" / "2")
        assert version.available
        for name in graphs:
            answers[name].append(await _ask(registry, name, X))
        stream.send(X)
        answers["stream"].append(await stream.answer())
        assert await stream.close() == []
        # The very same loaded graphs answered every time.
        assert {name: (registry.graphs[name], registry.graphs[name].plan) for name in graphs} == (
            loaded
        )
    finally:
        await registry.unload()
        dispatcher.close()
    return answers


def test_graph_without_version_uses_a_version_added_while_it_serves(tmp_path) -> None:
    answers = asyncio.run(_grow(tmp_path))
    # New requests, and a stream whose session opened before version 2 existed, move to it.
    for key in ("follows", "stream"):
        before, after = answers[key]
        np.testing.assert_array_equal(before, X + 1)
        np.testing.assert_array_equal(after, X + 2)
    # A session pinned to "1" stays on version 1.
    for answer in answers["pinned"]:
        np.testing.assert_array_equal(answer, X + 1)
