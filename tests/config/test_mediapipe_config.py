"""mediapipe_config_list entries: defaults, path resolution, strictness, duplicates, subconfig."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from ovmsx.config import ConfigError, load_config
from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.config.server_config import load_subconfig
from ovmsx.status import StatusCode, StatusError


def config_file(folder: Path, *graphs: Any, models: list[Any] | None = None) -> Path:
    path = folder / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"model_config_list": models or [], "mediapipe_config_list": list(graphs)}
    path.write_text(json.dumps(document))
    return path


def one_graph(folder: Path, entry: dict[str, Any]) -> MediapipeConfig:
    (graph,) = load_config(config_file(folder, entry)).graphs
    return graph


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- paths ----------------------------------------------------------------------------------


def test_defaults_put_everything_in_the_folder_named_like_the_graph(tmp_path: Path) -> None:
    graph = one_graph(tmp_path / "cfg", {"name": "dummy"})
    assert graph.name == "dummy"
    assert (graph.base_path, graph.graph_path, graph.subconfig) == (None, None, None)
    assert graph.config_dir == tmp_path / "cfg"
    assert graph.base_dir == tmp_path / "cfg/dummy"
    assert graph.graph_file == tmp_path / "cfg/dummy/graph.pbtxt"
    assert not graph.is_remote


def test_empty_base_path_means_the_default(tmp_path: Path) -> None:
    graph = one_graph(tmp_path, {"name": "g", "base_path": ""})
    assert graph.base_dir == tmp_path / "g"


def test_relative_paths_follow_the_config_file_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    graph = one_graph(
        tmp_path / "deep",
        {"name": "g", "base_path": "graphs/g1", "graph_path": "sub/my.pbtxt"},
    )
    assert graph.base_dir == tmp_path / "deep/graphs/g1"
    assert graph.graph_file == tmp_path / "deep/graphs/g1/sub/my.pbtxt"


def test_absolute_paths_are_kept(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    graph = one_graph(
        tmp_path / "cfg",
        {"name": "g", "base_path": str(elsewhere), "graph_path": str(tmp_path / "x/y.pbtxt")},
    )
    assert graph.base_dir == elsewhere
    assert graph.graph_file == tmp_path / "x/y.pbtxt"


def test_validation_without_context_resolves_against_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    graph = MediapipeConfig.model_validate({"name": "g", "graph_path": "a.pbtxt"})
    assert graph.graph_file == tmp_path / "g/a.pbtxt"


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "g", "base_path": "s3://bucket/graphs/g"},
        {"name": "g", "base_path": "gs://bucket/g", "graph_path": "graph.pbtxt"},
        {"name": "g", "graph_path": "az://account/container/graph.pbtxt"},
    ],
)
def test_cloud_urls_are_kept_but_not_served(tmp_path: Path, entry: dict[str, Any]) -> None:
    graph = one_graph(tmp_path, entry)
    assert graph.is_remote
    assert (graph.base_path, graph.graph_path) == (entry.get("base_path"), entry.get("graph_path"))
    with pytest.raises(StatusError) as caught:
        _ = graph.graph_file
    assert caught.value.code is StatusCode.PATH_INVALID
    assert "graph g: " in str(caught.value)
    assert "cloud storage is not supported" in str(caught.value)


def test_paths_that_climb_with_dots_are_followed(tmp_path: Path) -> None:
    # OVMS joins a graph's paths as strings and opens the result: ".." is not refused.
    graph = one_graph(
        tmp_path,
        {
            "name": "g",
            "base_path": "graphs/../graphs/g",
            "graph_path": "../shared.pbtxt",
            "subconfig": "../sub/../subconfig.json",
        },
    )
    assert graph.base_dir == tmp_path / "graphs/g"
    assert graph.graph_file == tmp_path / "graphs/shared.pbtxt"
    assert graph.subconfig_file == tmp_path / "graphs/subconfig.json"


# -- subconfig ------------------------------------------------------------------------------


def test_default_subconfig_is_optional(tmp_path: Path) -> None:
    graph = one_graph(tmp_path, {"name": "g"})
    assert graph.subconfig_file is None
    write(tmp_path / "g/subconfig.json", "{}")
    assert graph.subconfig_file == tmp_path / "g/subconfig.json"


def test_explicit_subconfig_is_returned_even_when_missing(tmp_path: Path) -> None:
    graph = one_graph(tmp_path, {"name": "g", "base_path": "gdir", "subconfig": "models.json"})
    assert graph.subconfig_file == tmp_path / "gdir/models.json"
    # Reading it is where a missing file is reported.
    with pytest.raises(ConfigError) as caught:
        load_subconfig(graph.subconfig_file)
    assert caught.value.path == tmp_path / "gdir/models.json"
    assert "cannot read the file" in str(caught.value)


def test_subconfig_models_resolve_against_the_subconfig_folder(tmp_path: Path) -> None:
    path = write(
        tmp_path / "graphs/g/subconfig.json",
        json.dumps(
            {
                "model_config_list": [
                    {"config": {"name": "dummy", "base_path": "models/dummy"}},
                    {"config": {"name": "absolute", "base_path": str(tmp_path / "abs")}},
                    {"config": {"name": "dummy", "base_path": "other"}},
                ]
            }
        ),
    )
    models = load_subconfig(path)
    assert [model.name for model in models] == ["dummy", "absolute"]  # first "dummy" wins
    assert models[0].local_path == tmp_path / "graphs/g/models/dummy"
    assert models[1].local_path == tmp_path / "abs"


@pytest.mark.parametrize(
    ("document", "key", "complaint"),
    [
        ({}, "model_config_list", "required key is missing"),
        (
            {"model_config_list": [], "mediapipe_config_list": []},
            "mediapipe_config_list",
            "unknown",
        ),
        (
            {"model_config_list": [{"config": {"name": "m", "nireq": -1}}]},
            "model_config_list[0].config.nireq",
            "greater than or equal to 0",
        ),
    ],
)
def test_subconfig_mistakes_name_file_and_key(
    tmp_path: Path, document: Any, key: str, complaint: str
) -> None:
    path = write(tmp_path / "subconfig.json", json.dumps(document))
    with pytest.raises(ConfigError) as caught:
        load_subconfig(path)
    assert (caught.value.key, caught.value.status) == (key, StatusCode.JSON_INVALID)
    assert complaint in caught.value.problem
    assert str(caught.value).startswith(f"{path}: {key}: ")


def test_subconfig_that_is_not_json(tmp_path: Path) -> None:
    path = write(tmp_path / "subconfig.json", '{"model_config_list": [')
    with pytest.raises(ConfigError, match="line 1 column 24") as caught:
        load_subconfig(path)
    assert caught.value.status is StatusCode.JSON_INVALID


# -- strictness and duplicates --------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "key", "complaint"),
    [
        ({}, "mediapipe_config_list[0].name", "required key is missing"),
        ({"name": ""}, "mediapipe_config_list[0].name", "at least 1 character"),
        ({"name": 3}, "mediapipe_config_list[0].name", "valid string"),
        ({"name": "g", "base_path": 1}, "mediapipe_config_list[0].base_path", "valid string"),
        ({"name": "g", "graph_path": ["a"]}, "mediapipe_config_list[0].graph_path", "string"),
        ({"name": "g", "subconfig": {}}, "mediapipe_config_list[0].subconfig", "string"),
        ({"name": "g", "nireq": 1}, "mediapipe_config_list[0].nireq", "unknown key"),
        ({"name": "g", "graph": "x"}, "mediapipe_config_list[0].graph", "unknown key"),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, entry: Any, key: str, complaint: str) -> None:
    path = config_file(tmp_path, entry)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert (caught.value.key, caught.value.status) == (key, StatusCode.JSON_INVALID)
    assert complaint in caught.value.problem


def test_duplicate_graph_names_keep_the_first_and_warn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = config_file(
        tmp_path,
        {"name": "g", "base_path": "first"},
        {"name": "other"},
        {"name": "g", "base_path": "second"},
    )
    with caplog.at_level(logging.WARNING, logger="ovmsx.config"):
        config = load_config(path)
    assert [graph.name for graph in config.graphs] == ["g", "other"]
    assert config.graphs[0].base_dir == tmp_path / "first"
    assert "graph name 'g' is defined more than once" in caplog.text


def test_graphs_and_models_live_side_by_side(tmp_path: Path) -> None:
    path = config_file(tmp_path, {"name": "g"}, models=[{"config": {"name": "m"}}])
    config = load_config(path)
    assert [model.name for model in config.models] == ["m"]
    assert [graph.name for graph in config.graphs] == ["g"]
    assert config.graphs == tuple(config.mediapipe_config_list)


def test_no_graphs_by_default(tmp_path: Path) -> None:
    path = write(tmp_path / "config.json", '{"model_config_list": []}')
    assert load_config(path).graphs == ()


def test_entries_are_frozen(tmp_path: Path) -> None:
    graph = one_graph(tmp_path, {"name": "g"})
    with pytest.raises(ValueError, match="frozen"):
        graph.name = "h"  # type: ignore[misc]
