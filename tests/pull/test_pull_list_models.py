"""``--list_models``: the servables of a model repository, named by their path in it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pull_outcomes import Run

from ovmsx.config.errors import EX_USAGE
from ovmsx.pull import list_servables
from ovmsx.pull.errors import EX_FAILURE


def _touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "models"
    _touch(
        root,
        # pulled models: graph folders two levels down
        "OpenVINO/Phi-3-mini-int4-ov/graph.pbtxt",
        "OpenVINO/Phi-3-mini-int4-ov/openvino_model.xml",
        "OpenVINO/Phi-3-mini-int4-ov/openvino_model.bin",
        "OpenVINO/Phi-3-mini-int4-ov/.cache/huggingface/download/x.metadata",
        "acme/embed/graph.pbtxt",
        # classic models: version folders
        "resnet/1/model.xml",
        "resnet/1/model.bin",
        "resnet/2/model.xml",
        "detector/3/model.onnx",
        "deep/er/still/1/model.tflite",
        # not servables
        "half/1/model.xml",  # no .bin
        "zero/01/model.onnx",  # a version has no leading zero
        "notes/readme.txt",
        ".hidden/graph.pbtxt",
        # a graph folder is not searched further
        "pipeline/graph.pbtxt",
        "pipeline/inner/1/model.onnx",
    )
    return root


def test_servables_are_graph_folders_and_versioned_model_folders(repository: Path) -> None:
    assert list_servables(repository) == [
        "OpenVINO/Phi-3-mini-int4-ov",
        "acme/embed",
        "deep/er/still",
        "detector",
        "pipeline",
        "resnet",
    ]


def test_list_models_prints_the_repository_and_its_servables(
    repository: Path, ovmsx_mode: Run
) -> None:
    outcome = ovmsx_mode("--list_models", "--model_repository_path", repository)

    assert outcome.code == 0, outcome.err
    assert outcome.out.splitlines() == [
        "Listing models in repository...",
        f"Model repository path: {repository}",
        "OpenVINO/Phi-3-mini-int4-ov",
        "acme/embed",
        "deep/er/still",
        "detector",
        "pipeline",
        "resnet",
    ]


def test_the_repository_defaults_to_ovms_model_repository_path(
    repository: Path, ovmsx_mode: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OVMS_MODEL_REPOSITORY_PATH", str(repository))

    outcome = ovmsx_mode("--list_models")

    assert outcome.code == 0, outcome.err
    assert "resnet" in outcome.out.splitlines()


def test_a_repository_that_is_not_a_folder_is_reported(ovmsx_mode: Run, tmp_path: Path) -> None:
    outcome = ovmsx_mode("--list_models", "--model_repository_path", tmp_path / "none")

    assert outcome.code == EX_FAILURE
    assert outcome.err == f"ovmsx: Path is not a directory: {tmp_path / 'none'}\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--list_models"], "Use --list_models with --model_repository_path"),
        (["--list_models", "--pull", "--source_model", "a/b", "--model_repository_path", "m"],
         "error parsing options - --list_models cannot be used with --pull or --task"),
        (["--list_models", "--remove_from_config", "--model_repository_path", "m"],
         "error parsing options - --list_models cannot be used with --remove_from_config"),
    ],
)  # fmt: skip
def test_flags_ovms_refuses(
    argv: list[str], message: str, ovmsx_mode: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OVMS_MODEL_REPOSITORY_PATH", raising=False)

    outcome = ovmsx_mode(*argv)

    assert outcome.code == EX_USAGE
    assert outcome.err == f"ovmsx: {message}\n"
