"""Graph folders given as models, on a real server: an entry of model_config_list (or
--model_name/--model_path) whose folder, or its 1/ folder, holds graph.pbtxt serves as a graph
of that name, its subconfig.json read; a folder without one stays a model; and a graph's
graph_path follows "..". tritonclient over gRPC, plain HTTP over REST."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from details_servables import INCREMENT_GRAPH, fp32, save_add_one, write_graph
from rest_process import RestProcess, rest_served
from tritonclient.utils import InferenceServerException

X = (np.arange(10, dtype=np.float32) / 8).reshape(1, 10)
FOLDER_GRAPHS = ("in_base", "in_version_one", "with_subconfig")
NOT_LOADED = "Mediapipe is not loaded yet"


def _files(root: Path) -> None:
    """Under ``root``: a model folder, three graph folders (graph.pbtxt in the folder, in its
    1/ folder, and one with a subconfig.json beside it), a graph folder whose graph.pbtxt does
    not parse, a folder with neither graph nor versions, and a graph sharing a .pbtxt
    one folder up."""
    save_add_one(root / "models" / "add_one")
    write_graph(root / "folders" / "in_base", INCREMENT_GRAPH)
    write_graph(root / "folders" / "in_version_one" / "1", INCREMENT_GRAPH)
    with_subconfig = write_graph(root / "folders" / "with_subconfig", INCREMENT_GRAPH)
    save_add_one(with_subconfig / "inner")
    sub = {"model_config_list": [{"config": {"name": "from_subconfig", "base_path": "inner"}}]}
    (with_subconfig / "subconfig.json").write_text(json.dumps(sub))
    write_graph(root / "folders" / "broken", "node { this is not pbtxt")
    # Handlers only: these entries name their graph file with graph_path.
    (write_graph(root / "folders" / "named", INCREMENT_GRAPH) / "graph.pbtxt").unlink()
    (root / "folders" / "empty" / "not_a_version").mkdir(parents=True)
    # graphs/inc holds only the handler: its graph file is graphs/shared.pbtxt.
    (write_graph(root / "graphs" / "inc", INCREMENT_GRAPH) / "graph.pbtxt").unlink()
    (root / "graphs" / "shared.pbtxt").write_text(INCREMENT_GRAPH)


def _config(root: Path) -> Path:
    names = {
        "plain": "models/add_one",
        **{name: f"folders/{name}" for name in (*FOLDER_GRAPHS, "broken", "empty")},
    }
    named = [
        {"name": "named_file", "base_path": "folders/named",
         "graph_path": "../in_base/graph.pbtxt"},
        {"name": "missing_file", "base_path": "folders/named", "graph_path": "nope.pbtxt"},
    ]  # fmt: skip
    document = {
        "model_config_list": [{"config": {"name": n, "base_path": p}} for n, p in names.items()]
        + [{"config": entry} for entry in named],
        "mediapipe_config_list": [
            {"name": "shared", "base_path": "graphs/inc", "graph_path": "../shared.pbtxt"}
        ],
    }
    path = root / "config.json"
    path.write_text(json.dumps(document, indent=1))
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[RestProcess, grpcclient.InferenceServerClient]]:
    root = tmp_path_factory.mktemp("graph_folders")
    _files(root)
    with (
        rest_served(["--config_path", str(_config(root))], root) as server,
        grpcclient.InferenceServerClient(f"127.0.0.1:{server.port}") as client,
    ):
        yield server, client


def _answer(client: grpcclient.InferenceServerClient, name: str) -> np.ndarray:
    return client.infer(name, [fp32("input", X)]).as_numpy("output")


def _refusal(call, *args) -> InferenceServerException:
    with pytest.raises(InferenceServerException) as caught:
        call(*args)
    return caught.value


def _metadata_without_name(client: grpcclient.InferenceServerClient, name: str) -> dict:
    metadata = client.get_model_metadata(name, as_json=True)
    assert metadata.pop("name") == name
    return metadata


@pytest.mark.parametrize("name", FOLDER_GRAPHS)
def test_a_graph_folder_entry_serves_as_a_graph(served, name: str) -> None:
    server, client = served
    np.testing.assert_array_equal(_answer(client, name), X + 1)
    assert client.is_model_ready(name)
    # Metadata as for the same graph listed in mediapipe_config_list: version "1", the
    # graph's own inputs and outputs.
    listed = _metadata_without_name(client, "shared")
    assert _metadata_without_name(client, name) == listed
    assert listed["versions"] == ["1"]
    assert server.request("GET", f"/v2/models/{name}/ready").status == 200
    reply = server.infer(
        name, {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32",
                           "data": X.ravel().tolist()}]}
    )  # fmt: skip
    assert reply.status == 200, reply.body
    (output,) = reply.json()["outputs"]
    np.testing.assert_allclose(output["data"], (X + 1).ravel())


def test_the_config_lists_folder_graphs_with_the_graph_state(served) -> None:
    server, _ = served
    reply = server.request("GET", "/v1/config")
    assert reply.status == 200
    states = {
        name: [(v["version"], v["state"]) for v in entry["model_version_status"]]
        for name, entry in reply.json().items()
    }
    for name in (*FOLDER_GRAPHS, "shared"):
        assert states[name] == [("1", "AVAILABLE")]
    assert states["plain"] == [("1", "AVAILABLE")]
    assert states["from_subconfig"] == [("1", "AVAILABLE")]
    assert states["broken"] == [("1", "LOADING")]  # a graph that failed: OVMS's report
    assert states["empty"] == []  # a model without a version


def test_a_subconfig_beside_graph_pbtxt_serves_its_models(served) -> None:
    _, client = served
    np.testing.assert_array_equal(_answer(client, "from_subconfig"), X + 1)


def test_a_folder_without_graph_pbtxt_stays_a_model(served) -> None:
    _, client = served
    np.testing.assert_array_equal(_answer(client, "plain"), X + 1)
    metadata = client.get_model_metadata("plain", as_json=True)
    assert metadata["versions"] == ["1"]
    # The model's own tensors (a graph's are untyped: its Python node takes anything).
    assert metadata["inputs"] == [{"name": "input", "datatype": "FP32", "shape": ["1", "10"]}]


def test_a_folder_with_neither_graph_nor_versions_fails_as_a_model(served) -> None:
    _, client = served
    error = _refusal(_answer, client, "empty")
    assert error.status() == "StatusCode.NOT_FOUND"
    assert error.message().startswith("Model with requested version is not found")
    error = _refusal(client.get_model_metadata, "empty")
    assert error.status() == "StatusCode.NOT_FOUND"
    assert error.message().startswith(
        "Model with requested version is not found - model empty: "
        "Not a single model version directory has valid numeric name - "
    )


def test_a_graph_folder_whose_graph_does_not_parse_fails_as_a_graph(served) -> None:
    _, client = served
    assert not client.is_model_ready("broken")
    error = _refusal(_answer, client, "broken")
    assert error.status() == "StatusCode.UNAVAILABLE"
    assert error.message().startswith(
        f"{NOT_LOADED} - broken: Failed to read protobuf graph configuration file - "
    )


def test_a_graph_path_climbing_with_dots_is_followed(served) -> None:
    _, client = served
    np.testing.assert_array_equal(_answer(client, "shared"), X + 1)


def test_an_entry_with_graph_path_is_a_graph_of_that_file(served) -> None:
    _, client = served
    # The file is one folder up; the handler is found in the entry's own folder.
    np.testing.assert_array_equal(_answer(client, "named_file"), X + 1)
    error = _refusal(_answer, client, "missing_file")
    assert error.status() == "StatusCode.UNAVAILABLE"
    assert error.message().startswith(
        f"{NOT_LOADED} - missing_file: File not found or cannot open - "
    )


@pytest.mark.parametrize("where", [".", "1"])
def test_model_path_on_a_graph_folder_serves_a_graph(tmp_path: Path, where: str) -> None:
    folder = tmp_path / "increment"
    write_graph(folder / where, INCREMENT_GRAPH)
    save_add_one(folder / where / "inner")
    sub = {"model_config_list": [{"config": {"name": "inner", "base_path": "inner"}}]}
    (folder / where / "subconfig.json").write_text(json.dumps(sub))
    args = ["--model_name", "increment", "--model_path", "increment"]
    with rest_served(args, tmp_path) as server:
        with grpcclient.InferenceServerClient(f"127.0.0.1:{server.port}") as client:
            np.testing.assert_array_equal(_answer(client, "increment"), X + 1)
            np.testing.assert_array_equal(_answer(client, "inner"), X + 1)
            assert client.get_model_metadata("increment", as_json=True)["versions"] == ["1"]
        assert server.request("GET", "/v2/models/increment/ready").status == 200


def test_model_path_folder_turns_into_a_graph_on_a_reload(tmp_path: Path) -> None:
    # Single-model mode has no config file: a reload looks at the folder again.
    folder = tmp_path / "flip"
    save_add_one(folder)
    args = ["--model_name", "flip", "--model_path", "flip", "--file_system_poll_wait_seconds", "0"]
    with (
        rest_served(args, tmp_path) as server,
        grpcclient.InferenceServerClient(f"127.0.0.1:{server.port}") as client,
    ):
        np.testing.assert_array_equal(_answer(client, "flip"), X + 1)
        metadata = client.get_model_metadata("flip", as_json=True)
        assert metadata["inputs"][0]["datatype"] == "FP32"
        write_graph(folder, INCREMENT_GRAPH)
        reply = server.request("POST", "/v1/config/reload")
        assert reply.status == 200, reply.body
        assert reply.json()["flip"]["model_version_status"][0]["state"] == "AVAILABLE"
        np.testing.assert_array_equal(_answer(client, "flip"), X + 1)
        # The graph's untyped Python input, where the model's was FP32.
        metadata = client.get_model_metadata("flip", as_json=True)
        assert metadata["inputs"] == [{"name": "input", "datatype": "INVALID"}]
