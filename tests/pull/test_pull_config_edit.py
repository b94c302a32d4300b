"""``--add_to_config`` and ``--remove_from_config``: OVMS's file, forms and messages, and a
result ovmsx's own config reader accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pull_outcomes import Run

from ovmsx.config.config_source import read_config
from ovmsx.config.errors import EX_USAGE
from ovmsx.pull.errors import EX_FAILURE


def _models(config: Path) -> list[dict]:
    return [item["config"] for item in json.loads(config.read_text())["model_config_list"]]


def test_adding_to_a_missing_config_creates_it(ovmsx_mode: Run, tmp_path: Path) -> None:
    config = tmp_path / "config.json"

    outcome = ovmsx_mode(
        "--add_to_config", "--config_path", config, "--model_name", "resnet", "--model_path",
        "/models/resnet",
    )  # fmt: skip

    assert outcome.code == 0, outcome.err
    assert outcome.out == f"Config updated: {config}\n"
    assert json.loads(config.read_text()) == {
        "model_config_list": [{"config": {"name": "resnet", "base_path": "/models/resnet"}}]
    }
    assert config.read_text().startswith('{\n    "model_config_list": [\n')


def test_adding_keeps_everything_else_in_the_file(ovmsx_mode: Run, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    original = {
        "model_config_list": [{"config": {"name": "a", "base_path": "a", "nireq": 2}}],
        "mediapipe_config_list": [{"name": "g", "base_path": "g"}],
        "monitoring": {"metrics": {"enable": True}},
    }
    config.write_text(json.dumps(original))

    outcome = ovmsx_mode(
        "--add_to_config", "--config_path", config, "--model_name", "b", "--model_path", "b",
        "--shape", '{"x": "(1,3)"}', "--nireq", "4", "--target_device", "GPU",
    )  # fmt: skip

    assert outcome.code == 0, outcome.err
    document = json.loads(config.read_text())
    assert document["mediapipe_config_list"] == original["mediapipe_config_list"]
    assert document["monitoring"] == original["monitoring"]
    assert _models(config) == [
        {"name": "a", "base_path": "a", "nireq": 2},
        {
            "name": "b",
            "base_path": "b",
            "shape": {"x": "(1,3)"},
            "nireq": 4,
            "target_device": "GPU",
        },
    ]
    assert read_config(config).error is None  # ovmsx serves the edited file


def test_a_name_already_listed_is_refused(ovmsx_mode: Run, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"model_config_list": [{"config": {"name": "a", "base_path": "x"}}]})
    )
    before = config.read_text()

    outcome = ovmsx_mode("--add_to_config", "--config_path", config, "--model_name", "a",
                         "--model_path", "y")  # fmt: skip

    assert outcome.code == EX_FAILURE
    assert (
        "Could not add model to configuration file: a. Model with the same name already exists."
        in outcome.err
    )
    assert config.read_text() == before


def test_the_folder_of_the_config_and_the_older_flag_form_are_accepted(
    ovmsx_mode: Run, tmp_path: Path
) -> None:
    """OVMS 2025 took the path as the flag's value (a file, or a folder holding
    config.json); later releases take --config_path."""
    added = ovmsx_mode("--add_to_config", tmp_path, "--model_name", "a", "--model_path", "m/a")
    assert added.code == 0, added.err
    config = tmp_path / "config.json"
    assert _models(config) == [{"name": "a", "base_path": "m/a"}]

    removed = ovmsx_mode("--remove_from_config", config, "--model_name", "a")
    assert removed.code == 0, removed.err
    assert _models(config) == []


def test_model_repository_path_and_model_name_make_the_base_path(
    ovmsx_mode: Run, tmp_path: Path
) -> None:
    config = tmp_path / "config.json"

    outcome = ovmsx_mode("--add_to_config", "--config_path", config, "--model_name",
                         "OpenVINO/tiny-ov", "--model_repository_path", "/models")  # fmt: skip

    assert outcome.code == 0, outcome.err
    assert _models(config) == [
        {"name": "OpenVINO/tiny-ov", "base_path": "/models/OpenVINO/tiny-ov"}
    ]


def test_removing_takes_out_the_first_entry_of_that_name(ovmsx_mode: Run, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    entries = [
        {"config": {"name": n, "base_path": p}} for n, p in [("a", "1"), ("b", "2"), ("a", "3")]
    ]
    config.write_text(json.dumps({"model_config_list": entries}))

    outcome = ovmsx_mode("--remove_from_config", "--config_path", config, "--model_name", "a")

    assert outcome.code == 0, outcome.err
    assert outcome.out == f"Config updated: {config}\n"
    assert _models(config) == [{"name": "b", "base_path": "2"}, {"name": "a", "base_path": "3"}]


def test_removing_a_name_not_listed_or_from_no_file_fails(ovmsx_mode: Run, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    missing = ovmsx_mode("--remove_from_config", "--config_path", config, "--model_name", "a")
    assert missing.code == EX_FAILURE
    assert missing.err == f"ovmsx: Config path does not exist: {config}\n"

    config.write_text(json.dumps({"model_config_list": []}))
    unlisted = ovmsx_mode("--remove_from_config", "--config_path", config, "--model_name", "a")
    assert unlisted.code == EX_FAILURE
    assert "Configuration file doesn't have model with name: a." in unlisted.err


def test_a_config_that_is_not_json_is_left_alone(ovmsx_mode: Run, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text("{not json")

    outcome = ovmsx_mode("--add_to_config", "--config_path", config, "--model_name", "a",
                         "--model_path", "a")  # fmt: skip

    assert outcome.code == EX_FAILURE
    assert f"The file is not valid json: {config}" in outcome.err
    assert config.read_text() == "{not json"


def test_the_default_config_is_in_ovms_model_repository_path(
    ovmsx_mode: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OVMS_MODEL_REPOSITORY_PATH", str(tmp_path))

    outcome = ovmsx_mode("--add_to_config", "--model_name", "a")

    config = tmp_path / "config.json"
    assert outcome.code == 0, outcome.err
    assert outcome.out.splitlines() == [
        f"Using default config path: {config}",
        f"Config updated: {config}",
    ]
    assert _models(config) == [{"name": "a", "base_path": str(tmp_path / "a")}]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--add_to_config", "--model_name", "a", "--model_path", "a"],
         "Set config_path with add_to_config/remove_from_config"),
        (["--add_to_config", "--config_path", "c.json", "--model_path", "a"],
         "Set model_name with add_to_config/remove_from_config\nUsage:"),
        (["--add_to_config", "--config_path", "c.json", "--model_name", "a"],
         "Set model_name either with model_path or model_repository_path with add_to_config"),
        (["--remove_from_config", "--config_path", "c.json", "--model_name", "a",
          "--model_path", "a"],
         "error parsing options - --model_path cannot be used with --remove_from_config"),
        (["--remove_from_config", "--config_path", "c.json", "--model_name", "a", "--nireq", "2"],
         "Adding or removing models from the configuration file, allows passing only model_name "
         "and model_path parameters. Invalid parameters passed: nireq, "),
        (["--add_to_config", "--config_path", "c.json", "--list_models"],
         "error parsing options - --list_models cannot be used with --add_to_config"),
        (["--add_to_config", "--config_path", "c.json", "--source_model", "a/b"],
         "error parsing options - --add_to_config cannot be used with --pull or --task"),
        (["--add_to_config", "--config_path", "c.json", "--model_name", "a", "--model_path", "a",
          "--no_such_flag", "1"],
         "error parsing options - unmatched arguments: --no_such_flag, 1, "),
    ],
)  # fmt: skip
def test_flags_ovms_refuses(
    argv: list[str], message: str, ovmsx_mode: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    outcome = ovmsx_mode(*argv)

    assert outcome.code == EX_USAGE
    assert outcome.err.startswith(f"ovmsx: {message}")
    assert not (tmp_path / "c.json").exists()
