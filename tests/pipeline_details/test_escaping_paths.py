"""Paths that climb with ``..`` (custom-node library and model paths) are refused with
PATH_INVALID, as OVMS refuses them, on a real server: at start the rest of the config serves;
on a reload through the config API the entries serving keep serving. A graph's own paths
(``base_path``, ``graph_path``, ``subconfig``) follow ``..``, as OVMS's do.

Every climbing path here leads back to a file or folder that exists and serves under its plain
path, so a refusal can only come from the ``..``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from details_servables import INCREMENT_GRAPH, fp32, save_add_one, write_graph
from rest_process import RestProcess
from serving_pipelines import custom_node, pipeline
from tritonclient.utils import InferenceServerException

import ovmsx.custom_nodes

ESCAPE = "escape with .. is forbidden"
PATH_INVALID = "The provided base path is invalid or doesn't exists"
X = (np.arange(10, dtype=np.float32) / 8).reshape(1, 10)


def _files(root: Path) -> None:
    """models/add_one, libs/libadd.so (the built-in add_one node), graphs/inc (+1 in Python)
    with an empty subconfig, all under ``root``, where the config file goes."""
    save_add_one(root / "models" / "add_one")
    (root / "libs").mkdir()
    shutil.copy(ovmsx.custom_nodes.built_in("add_one"), root / "libs" / "libadd.so")
    graph = write_graph(root / "graphs" / "inc", INCREMENT_GRAPH)
    (graph / "sub.json").write_text(json.dumps({"model_config_list": []}))


def _on_library(name: str, library: str) -> dict:
    node = custom_node(
        "add", library, {"input_numbers": ("request", "numbers")}, {"output_numbers": "out"}
    )
    return pipeline(name, ["numbers"], [node], {"result": ("add", "out")})


def _write(root: Path, models: dict, libraries: dict, pipelines: list, graphs: list) -> Path:
    config = {
        "model_config_list": [{"config": {"name": n, "base_path": p}} for n, p in models.items()],
        "custom_node_library_config_list": [
            {"name": n, "base_path": p} for n, p in libraries.items()
        ],
        "pipeline_config_list": pipelines,
        "mediapipe_config_list": graphs,
    }
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def _serve(config: Path, root: Path) -> RestProcess:
    server = RestProcess(
        ["--config_path", str(config), "--file_system_poll_wait_seconds", "0"], root
    )
    server.wait_ready()
    return server


def _model_answer(client: grpcclient.InferenceServerClient, name: str) -> np.ndarray:
    return client.infer(name, [fp32("input", X)]).as_numpy("output")


def _pipeline_answer(client: grpcclient.InferenceServerClient, name: str) -> np.ndarray:
    return client.infer(name, [fp32("numbers", X)]).as_numpy("result")


def _graph_answer(client: grpcclient.InferenceServerClient, name: str) -> np.ndarray:
    return client.infer(name, [fp32("input", X)]).as_numpy("output")


def _refusal(call, *args) -> str:
    with pytest.raises(InferenceServerException) as caught:
        call(*args)
    return str(caught.value)


def _states(server: RestProcess) -> dict[str, list[str]]:
    reply = server.request("GET", "/v1/config")
    assert reply.status == 200
    return {
        name: [version["state"] for version in entry["model_version_status"]]
        for name, entry in json.loads(reply.body).items()
    }


# -- at start ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def started(tmp_path_factory) -> Iterator[tuple[RestProcess, grpcclient.InferenceServerClient]]:
    root = tmp_path_factory.mktemp("escaping_at_start")
    _files(root)
    config = _write(
        root,
        models={"good": "models/add_one", "climbing": "models/../models/add_one"},
        libraries={"adder": "libs/libadd.so", "climbing_lib": "libs/../libs/libadd.so"},
        pipelines=[_on_library("on_adder", "adder"), _on_library("on_climbing", "climbing_lib")],
        graphs=[
            {"name": "inc", "base_path": "graphs/inc", "subconfig": "sub.json"},
            {"name": "climbing_base", "base_path": "graphs/../graphs/inc"},
            {"name": "climbing_graph", "base_path": "graphs/inc",
             "graph_path": "../inc/graph.pbtxt"},
            {"name": "climbing_sub", "base_path": "graphs/inc", "subconfig": "../inc/sub.json"},
        ],
    )  # fmt: skip
    server = _serve(config, root)
    try:
        with grpcclient.InferenceServerClient(f"127.0.0.1:{server.port}") as client:
            yield server, client
    finally:
        assert server.stop() == 0, server.log()


def test_the_entries_with_plain_paths_serve(started) -> None:
    _, client = started
    np.testing.assert_array_equal(_model_answer(client, "good"), X + 1)
    np.testing.assert_array_equal(_pipeline_answer(client, "on_adder"), X + 1)
    np.testing.assert_array_equal(_graph_answer(client, "inc"), X + 1)


def test_a_model_path_with_dots_is_refused(started) -> None:
    server, client = started
    # No version could load: the model is listed without versions and says why.
    for call in (client.is_model_ready, client.get_model_metadata):
        text = _refusal(call, "climbing")
        assert "StatusCode.NOT_FOUND" in text
        assert f"model climbing: {PATH_INVALID} - model climbing: Path models/../" in text
    _refusal(_model_answer, client, "climbing")
    assert _states(server)["climbing"] == []
    expected = f"model climbing: {PATH_INVALID} - model climbing: Path models/../models/add_one"
    assert expected in server.log()


def test_a_library_path_with_dots_is_refused(started) -> None:
    _, client = started
    assert not client.is_model_ready("on_climbing")
    text = _refusal(_pipeline_answer, client, "on_climbing")
    assert "Pipeline is not loaded yet - on_climbing" in text
    assert "Pipeline refers to incorrect library" in text
    assert f"{PATH_INVALID} - custom node library climbing_lib: Path libs/../libs/libadd.so" in (
        text
    )
    assert ESCAPE in text


@pytest.mark.parametrize("graph", ["climbing_base", "climbing_graph", "climbing_sub"])
def test_a_graph_path_with_dots_is_followed(started, graph: str) -> None:
    server, client = started
    assert client.is_model_ready(graph)
    np.testing.assert_array_equal(_graph_answer(client, graph), X + 1)
    assert f"graph {graph}: Path" not in server.log()


# -- on a reload -------------------------------------------------------------------------------


def test_a_reload_refuses_climbing_model_and_library_paths_and_keeps_what_serves(
    tmp_path: Path,
) -> None:
    _files(tmp_path)

    def write(model: str, library: str, graph: str) -> Path:
        return _write(
            tmp_path,
            models={"m": model},
            libraries={"lib": library},
            pipelines=[_on_library("p", "lib")],
            graphs=[{"name": "g", "base_path": graph}],
        )

    plain = ("models/add_one", "libs/libadd.so", "graphs/inc")
    server = _serve(write(*plain), tmp_path)
    try:
        with grpcclient.InferenceServerClient(f"127.0.0.1:{server.port}") as client:
            write("models/../models/add_one", "libs/../libs/libadd.so", "graphs/../graphs/inc")
            for _ in range(2):  # the API tries a failed load again, and refuses it again
                reply = server.request("POST", "/v1/config/reload")
                assert reply.status == 400, reply.body
                body = json.loads(reply.body)
                assert body["error"] == (
                    "Reloading config file failed. Check server logs for more info."
                )
                assert body["details"] == (
                    f"{PATH_INVALID} - model m: Path models/../models/add_one {ESCAPE}"
                )
                np.testing.assert_array_equal(_model_answer(client, "m"), X + 1)
                np.testing.assert_array_equal(_pipeline_answer(client, "p"), X + 1)
                np.testing.assert_array_equal(_graph_answer(client, "g"), X + 1)
                assert _states(server) == {
                    "m": ["AVAILABLE"],
                    "p": ["AVAILABLE"],
                    "g": ["AVAILABLE"],
                }
            log = server.log()
            assert f"custom node library lib: Path libs/../libs/libadd.so {ESCAPE}" in log
            assert f"graph g: Path graphs/../graphs/inc {ESCAPE}" not in log  # followed

            write(*plain)
            reply = server.request("POST", "/v1/config/reload")
            assert reply.status == 200, reply.body
            np.testing.assert_array_equal(_pipeline_answer(client, "p"), X + 1)
            np.testing.assert_array_equal(_graph_answer(client, "g"), X + 1)
    finally:
        assert server.stop() == 0, server.log()
