"""config.json on disk: a full file loads, and every kind of mistake names the file and the key."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from ovmsx.config import AUTO, ConfigError, Dim, LayoutSpec, ServerConfig, load_config
from ovmsx.status import StatusCode

FULL_MODEL = {
    "name": "resnet",
    "base_path": "models/resnet",
    "batch_size": "auto",
    "shape": {"image": "(1,3,224,224)", "extra": "auto"},
    "layout": {"image": "NHWC:NCHW"},
    "model_version_policy": {"specific": {"versions": [1, 3]}},
    "nireq": 4,
    "target_device": "AUTO:GPU,CPU",
    "allow_cache": False,
    "plugin_config": {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": 2, "X": True},
    "custom_loader_options": {"loader_name": "sample", "model_file": "a.xml"},
    "graph_path": "graph.pbtxt",
    "subconfig": "subconfig.json",
}
PIPELINES = [{"name": "p", "inputs": ["a"], "nodes": [], "outputs": []}]
GRAPHS = [{"name": "g", "graph_path": "g.pbtxt"}]
LIBRARIES = [{"name": "lib", "base_path": "lib/libnode.so"}]
LOADERS = [{"config": {"loader_name": "sample", "library_path": "lib/loader.so"}}]
MONITORING = {"metrics": {"enable": True, "metrics_list": ["ovms_requests_success"]}}


def write(folder: Path, document: Any, name: str = "config.json") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document, indent=2))
    return path


def models_file(folder: Path, *configs: dict[str, Any]) -> Path:
    return write(folder, {"model_config_list": [{"config": c} for c in configs]})


def load_error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value


def test_every_key_is_accepted(tmp_path: Path) -> None:
    path = write(
        tmp_path / "cfg",
        {
            "model_config_list": [{"config": FULL_MODEL}],
            "pipeline_config_list": PIPELINES,
            "mediapipe_config_list": GRAPHS,
            "custom_node_library_config_list": LIBRARIES,
            "custom_loader_config_list": LOADERS,
            "monitoring": MONITORING,
        },
    )
    config = load_config(path)
    assert config.path == path
    assert config.config_dir == tmp_path / "cfg"
    (model,) = config.models
    assert model.name == "resnet"
    assert model.local_path == tmp_path / "cfg/models/resnet"
    assert model.batch_size == AUTO
    assert model.shape_for("image") == (Dim(1, 1), Dim(3, 3), Dim(224, 224), Dim(224, 224))
    assert model.shape_for("extra") == AUTO
    assert model.layout_for("image") == LayoutSpec("NHWC", "NCHW")
    assert model.model_version_policy.select([1, 2, 3, 4]) == [1, 3]
    assert (model.nireq, model.target_device, model.allow_cache) == (4, "AUTO:GPU,CPU", False)
    assert model.plugin_config_strings() == {
        "PERFORMANCE_HINT": "THROUGHPUT",
        "NUM_STREAMS": "2",
        "X": "true",
    }
    assert model.custom_loader_options == FULL_MODEL["custom_loader_options"]
    assert (model.graph_path, model.subconfig) == ("graph.pbtxt", "subconfig.json")
    assert [g.model_dump(exclude_none=True) for g in config.graphs] == GRAPHS
    assert [p.model_dump(exclude_none=True, by_alias=True) for p in config.pipelines] == PIPELINES
    assert [lib.model_dump() for lib in config.libraries] == LIBRARIES
    # Custom loaders are kept exactly as written; monitoring is validated (tests/metrics).
    assert config.custom_loader_config_list == LOADERS
    assert config.monitoring is not None
    assert config.monitoring.model_dump() == MONITORING


def test_minimal_file(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, {"model_config_list": []}))
    assert isinstance(config, ServerConfig)
    assert config.models == ()
    assert config.pipeline_config_list == []
    assert config.monitoring is None


def test_relative_paths_follow_the_config_file_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models_file(
        tmp_path / "deploy",
        {"name": "rel", "base_path": "models/a"},
        {"name": "up", "base_path": "../shared/b"},
        {"name": "abs", "base_path": str(tmp_path / "elsewhere")},
        {"name": "bare"},
        {"name": "cloud", "base_path": "s3://bucket/model"},
    )
    monkeypatch.chdir(tmp_path)  # load through a relative path to the file
    rel, up, absolute, bare, cloud = load_config(Path("deploy/config.json")).models
    assert rel.local_path == tmp_path / "deploy/models/a"
    assert up.local_path == tmp_path / "shared/b"
    assert absolute.local_path == tmp_path / "elsewhere"
    assert bare.local_path == tmp_path / "deploy/bare"
    assert cloud.is_remote
    assert cloud.local_path is None
    assert rel.base_path == "models/a"  # the written value is kept


def test_duplicate_names_keep_the_first_and_warn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = models_file(
        tmp_path,
        {"name": "a", "base_path": "first"},
        {"name": "b", "base_path": "other"},
        {"name": "a", "base_path": "second"},
    )
    with caplog.at_level(logging.WARNING, logger="ovmsx.config"):
        config = load_config(path)
    assert [m.name for m in config.models] == ["a", "b"]
    assert config.models[0].base_path == "first"
    assert "'a' is defined more than once" in caplog.text


@pytest.mark.parametrize(
    ("entry", "key", "complaint"),
    [
        ({"config": {"name": "m", "nireq": -1}}, "config.nireq", "greater than or equal to 0"),
        ({"config": {"name": "m", "nireq": 1.5}}, "config.nireq", "valid integer"),
        ({"config": {"base_path": "x"}}, "config.name", "required key is missing"),
        ({"config": {"name": 3}}, "config.name", "valid string"),
        ({"config": {"name": "m", "colour": "red"}}, "config.colour", "unknown key"),
        ({"config": {"name": "m"}, "extra": 1}, "extra", "unknown key"),
        ({}, "config", "required key is missing"),
        ({"config": "m"}, "config", "valid dictionary"),
        ({"config": {"name": "m", "shape": "(1,0)"}}, "config.shape", "'0'"),
        ({"config": {"name": "m", "shape": {"in": "(x)"}}}, "config.shape.in", "'x'"),
        ({"config": {"name": "m", "layout": "NQ"}}, "config.layout", "unexpected 'Q'"),
        ({"config": {"name": "m", "layout": {"in": 1}}}, "config.layout.in", "layout string"),
        ({"config": {"name": "m", "batch_size": -2}}, "config.batch_size", "at least 0"),
        ({"config": {"name": "m", "allow_cache": 1}}, "config.allow_cache", "valid boolean"),
        (
            {"config": {"name": "m", "plugin_config": {"K": [1]}}},
            "config.plugin_config.K",
            "a string, a number or a boolean",
        ),
        (
            {"config": {"name": "m", "model_version_policy": {"latest": {"num_versions": 0}}}},
            "config.model_version_policy.latest.num_versions",
            "greater than or equal to 1",
        ),
        (
            {"config": {"name": "m", "model_version_policy": {"all": {}, "specific": {}}}},
            "config.model_version_policy.specific.versions",
            "required key is missing",
        ),
        (
            {"config": {"name": "m", "model_version_policy": {"any": {}}}},
            "config.model_version_policy.any",
            "unknown key",
        ),
        (
            {"config": {"name": "m", "custom_loader_options": {}}},
            "config.custom_loader_options.loader_name",
            "a string is required",
        ),
    ],
)
def test_each_mistake_names_file_and_key(
    tmp_path: Path, entry: dict[str, Any], key: str, complaint: str
) -> None:
    path = write(tmp_path, {"model_config_list": [{"config": {"name": "ok"}}, entry]})
    error = load_error(path)
    full_key = f"model_config_list[1].{key}"
    assert error.path == path
    assert error.key == full_key
    assert complaint in error.problem
    assert str(error).startswith(f"{path}: {full_key}: ")
    assert error.status == StatusCode.JSON_INVALID


@pytest.mark.parametrize(
    ("document", "key", "complaint"),
    [
        ({}, "model_config_list", "required key is missing"),
        ({"model_config_list": {}}, "model_config_list", "valid list"),
        ({"model_config_list": [], "models": []}, "models", "unknown key"),
        ({"model_config_list": [], "pipeline_config_list": {}}, "pipeline_config_list", "list"),
        (
            {"model_config_list": [], "mediapipe_config_list": ["g"]},
            "mediapipe_config_list[0]",
            "valid dictionary",
        ),
        ({"model_config_list": [], "monitoring": []}, "monitoring", "valid dictionary"),
    ],
)
def test_top_level_mistakes(tmp_path: Path, document: Any, key: str, complaint: str) -> None:
    error = load_error(write(tmp_path, document))
    assert (error.key, complaint in error.problem) == (key, True)


def test_a_document_that_is_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path, [1, 2])
    error = load_error(path)
    assert error.key == ""
    assert str(error) == f"{path}: Input should be a valid dictionary or instance of ServerConfig"


@pytest.mark.parametrize(
    "key",
    ["stateful", "idle_sequence_cleanup", "low_latency_transformation", "max_sequence_number"],
)
def test_removed_stateful_keys_are_refused_with_the_reason(tmp_path: Path, key: str) -> None:
    path = models_file(tmp_path, {"name": "m", key: True})
    error = load_error(path)
    assert error.key == f"model_config_list[0].config.{key}"
    assert "removed in OVMS 2026.3" in str(error)


def test_all_problems_are_listed_first_one_first(tmp_path: Path) -> None:
    path = models_file(tmp_path, {"name": "a", "nireq": -1}, {"name": "b", "bogus": 1})
    error = load_error(path)
    assert [key for key, _ in error.problems] == [
        "model_config_list[0].config.nireq",
        "model_config_list[1].config.bogus",
    ]
    assert str(error).splitlines() == [f"{path}: {k}: {p}" for k, p in error.problems]


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "model_config_list": [\n    {"config": {"name": "m",}}\n  ]\n}')
    error = load_error(path)
    assert error.status == StatusCode.JSON_INVALID
    assert error.key == ""
    assert str(error).startswith(f"{path}: line 3 column 29: The file is not valid json - ")


def test_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b'{"model_config_list": [], "x": "\xff"}')
    error = load_error(path)
    assert error.status == StatusCode.JSON_INVALID
    assert "not UTF-8 text at byte 32" in str(error)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "config.json"
    error = load_error(path)
    assert error.path == path
    assert error.status is None
    assert str(error) == f"{path}: cannot read the file: No such file or directory"


def test_a_folder_is_not_a_config_file(tmp_path: Path) -> None:
    error = load_error(tmp_path)
    assert str(error).startswith(f"{tmp_path}: cannot read the file: ")
