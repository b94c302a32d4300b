"""Which model_config_list entries are graphs (``graph_folders``): the order the folder is looked
at in, and what each entry becomes (without a server; the served behaviour is tested in
tests/pipeline_details/test_graph_folders.py and tests/reload/test_graph_folder_reload.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ovmsx.config import load_config
from ovmsx.config.config_source import read_config, reexamine_folders
from ovmsx.config.graph_folders import graph_base, split_graph_folders
from ovmsx.config.model_config import ModelConfig


def entries(folder: Path, *configs: dict[str, Any], graphs: list[Any] | None = None) -> Path:
    path = folder / "config.json"
    document = {
        "model_config_list": [{"config": config} for config in configs],
        "mediapipe_config_list": graphs or [],
    }
    path.write_text(json.dumps(document))
    return path


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def only_entry(folder: Path, config: dict[str, Any]) -> ModelConfig:
    (model,) = load_config(entries(folder, config)).models
    return model


def test_a_folder_without_graph_pbtxt_is_a_model(tmp_path: Path) -> None:
    touch(tmp_path / "m/1/model.xml")
    assert graph_base(only_entry(tmp_path, {"name": "m", "base_path": "m"})) is None


def test_graph_pbtxt_in_the_base_path_makes_a_graph_based_there(tmp_path: Path) -> None:
    touch(tmp_path / "g/graph.pbtxt")
    touch(tmp_path / "g/1/graph.pbtxt")  # the base path is looked at first
    assert graph_base(only_entry(tmp_path, {"name": "g", "base_path": "g"})) == tmp_path / "g"


def test_graph_pbtxt_in_version_one_makes_a_graph_based_there(tmp_path: Path) -> None:
    touch(tmp_path / "g/1/graph.pbtxt")
    touch(tmp_path / "g/2/graph.pbtxt")  # only version folder 1 is looked in
    assert graph_base(only_entry(tmp_path, {"name": "g", "base_path": "g"})) == tmp_path / "g/1"


def test_an_explicit_graph_path_makes_a_graph_based_at_base_path(tmp_path: Path) -> None:
    touch(tmp_path / "g/1/graph.pbtxt")
    entry = only_entry(tmp_path, {"name": "g", "base_path": "g", "graph_path": "other.pbtxt"})
    assert graph_base(entry) == tmp_path / "g"
    _, (graph,) = split_graph_folders([entry])
    assert graph.graph_file == tmp_path / "g/other.pbtxt"


def test_the_default_base_path_is_looked_into(tmp_path: Path) -> None:
    touch(tmp_path / "g/graph.pbtxt")
    assert graph_base(only_entry(tmp_path, {"name": "g"})) == tmp_path / "g"


def test_climbing_and_cloud_base_paths_stay_models(tmp_path: Path) -> None:
    touch(tmp_path / "g/graph.pbtxt")
    for base_path in ("g/../g", "s3://bucket/g"):
        assert graph_base(only_entry(tmp_path, {"name": "g", "base_path": base_path})) is None


def test_a_graph_folder_becomes_a_graph_with_its_subconfig_models(tmp_path: Path) -> None:
    touch(tmp_path / "m/1/model.xml")
    touch(tmp_path / "g/1/graph.pbtxt")
    sub = {"model_config_list": [{"config": {"name": "inner", "base_path": "inner"}}]}
    touch(tmp_path / "g/1/subconfig.json", json.dumps(sub))
    path = entries(
        tmp_path,
        {"name": "m", "base_path": "m"},
        {"name": "g", "base_path": "g"},
        graphs=[{"name": "g", "base_path": "elsewhere"}, {"name": "listed"}],
    )
    servables = read_config(path).servables
    assert servables is not None
    assert [model.name for model in servables.models] == ["m", "inner"]
    # The inner model's base path starts at the subconfig's folder: beside graph.pbtxt.
    assert servables.models[1].local_path == tmp_path / "g/1/inner"
    # model_config_list is read first: its graph keeps the name mediapipe_config_list repeats.
    assert [graph.name for graph in servables.graphs] == ["g", "listed"]
    assert servables.graphs[0].base_dir == tmp_path / "g/1"
    assert servables.graphs[0].subconfig_file == tmp_path / "g/1/subconfig.json"


def test_reexamining_sees_a_folder_turn_into_a_graph_and_back(tmp_path: Path) -> None:
    touch(tmp_path / "g/1/model.xml")
    servables = read_config(entries(tmp_path, {"name": "g", "base_path": "g"})).servables
    assert servables is not None
    assert reexamine_folders(servables) is None
    graph_file = touch(tmp_path / "g/graph.pbtxt")
    turned = reexamine_folders(servables)
    assert turned is not None
    assert ([m.name for m in turned.models], [g.name for g in turned.graphs]) == ([], ["g"])
    assert reexamine_folders(turned) is None
    graph_file.unlink()
    back = reexamine_folders(turned)
    assert back is not None
    assert ([m.name for m in back.models], [g.name for g in back.graphs]) == (["g"], [])


def test_a_base_path_that_cannot_be_looked_into_stays_a_model(tmp_path: Path) -> None:
    too_long = "x" * 5000  # the file system refuses the name: the model load reports it
    assert graph_base(only_entry(tmp_path, {"name": "m", "base_path": too_long})) is None
