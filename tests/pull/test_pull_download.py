"""Pulling from a hub over real HTTP: the layout, what is printed, resuming, and each failure
with its message and exit code."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pull_fake_hub import FakeHub
from pull_outcomes import EMBEDDINGS_CONFIG, LLM_CONFIG, Run

from ovmsx.config.cli_options import parse_options
from ovmsx.config.errors import EX_USAGE
from ovmsx.graph.graph_config import parse_graph
from ovmsx.pull import parse_other_mode, pull
from ovmsx.pull.errors import EX_FAILURE
from ovmsx.pull.repo_layout import IN_PROGRESS_MARKER

REPO = "OpenVINO/tiny-llm-int4-ov"


def _pull(run: Run, models: Path, *flags: str, repo: str = REPO):
    return run("--pull", "--source_model", repo, "--model_repository_path", models, *flags)


def _files(folder: Path) -> dict[str, bytes]:
    """The model's files (not huggingface_hub's bookkeeping)."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and ".cache" not in path.relative_to(folder).parts
    }


def test_a_pull_downloads_the_repository_into_org_name_and_writes_the_graph(
    hub: FakeHub, llm_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)
    outcome = _pull(ovmsx_mode, tmp_path / "models", "--task", "text_generation")

    assert outcome.code == 0, outcome.err
    folder = tmp_path / "models" / "OpenVINO" / "tiny-llm-int4-ov"
    files = _files(folder)
    assert files.pop("graph.pbtxt")
    assert files == llm_files
    assert not (folder / IN_PROGRESS_MARKER).exists()
    assert outcome.out.splitlines() == [
        f"Model: {REPO} downloaded to: {folder}",
        f"Graph: graph.pbtxt created in: {folder}",
    ]
    graph = (folder / "graph.pbtxt").read_text()
    assert 'models_path: "./"' in graph
    parse_graph(graph, str(folder / "graph.pbtxt"))  # ovmsx serves what it wrote


def test_an_existing_folder_is_kept_and_only_its_graph_rewritten(
    hub: FakeHub, llm_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)
    assert _pull(ovmsx_mode, tmp_path).code == 0
    downloads = len(hub.downloads())
    folder = tmp_path / REPO

    again = _pull(ovmsx_mode, tmp_path, "--task", "text_generation", "--max_num_seqs", "8")

    assert again.code == 0, again.err
    assert len(hub.downloads()) == downloads
    assert (
        f"Path already exists on local filesystem. Skipping download to path: {folder}" in again.out
    )
    assert "max_num_seqs: 8," in (folder / "graph.pbtxt").read_text()


def test_overwrite_models_downloads_the_repository_again(
    hub: FakeHub, llm_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)
    assert _pull(ovmsx_mode, tmp_path).code == 0
    stray = tmp_path / REPO / "stray.txt"
    stray.write_text("left over")

    again = _pull(ovmsx_mode, tmp_path, "--overwrite_models")

    assert again.code == 0, again.err
    assert not stray.exists()
    assert len(hub.file_gets(REPO, "openvino_model.bin")) == 2


def test_a_transfer_cut_mid_file_continues_from_the_byte_it_reached(
    hub: FakeHub, big_ir_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    """huggingface_hub writes a download in 10 MiB chunks and, when the connection breaks,
    asks for the rest from the end of the last chunk it wrote (``Range: bytes=N-``)."""
    weights = big_ir_files["openvino_model.bin"]
    cut = 11 * 1024 * 1024
    hub.add_repo(REPO, {**big_ir_files, "config.json": LLM_CONFIG})
    hub.drop_once(REPO, "openvino_model.bin", after=cut)

    outcome = _pull(ovmsx_mode, tmp_path)

    assert outcome.code == 0, outcome.err
    first, second = hub.file_gets(REPO, "openvino_model.bin")
    assert "range" not in first.headers
    resumed_at = int(second.headers["range"].removeprefix("bytes=").removesuffix("-"))
    assert 0 < resumed_at <= cut
    assert (tmp_path / REPO / "openvino_model.bin").read_bytes() == weights


def test_the_task_comes_from_config_json_when_not_given(
    hub: FakeHub, ir_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo("OpenVINO/tiny-embed-ov", {**ir_files, "config.json": EMBEDDINGS_CONFIG})

    outcome = _pull(ovmsx_mode, tmp_path, "--pooling", "MEAN", repo="OpenVINO/tiny-embed-ov")

    assert outcome.code == 0, outcome.err
    graph = (tmp_path / "OpenVINO/tiny-embed-ov/graph.pbtxt").read_text()
    assert '"EmbeddingsCalculatorOV"' in graph
    assert "pooling: MEAN" in graph
    assert 'models_path: "./"' in graph


def test_a_model_whose_task_cannot_be_told_needs_task(
    hub: FakeHub, ir_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(REPO, ir_files)  # no config.json

    outcome = _pull(ovmsx_mode, tmp_path)

    assert outcome.code == EX_USAGE
    assert "Could not infer model task - specify --task value explicitly" in outcome.err


def test_a_missing_repository_is_reported_and_nothing_is_created(
    hub: FakeHub, ovmsx_mode: Run, tmp_path: Path
) -> None:
    outcome = _pull(ovmsx_mode, tmp_path, repo="OpenVINO/no-such-model")

    assert outcome.code == EX_FAILURE
    assert outcome.err.startswith(
        f"ovmsx: repository OpenVINO/no-such-model was not found on {hub.url} (HTTP 404)"
    )
    assert "HF_TOKEN" in outcome.err
    assert not (tmp_path / "OpenVINO").exists()


def test_an_unreachable_hub_is_reported(
    hub: FakeHub,
    closed_port: int,
    ovmsx_mode: Run,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")

    outcome = _pull(ovmsx_mode, tmp_path)

    assert outcome.code == EX_FAILURE
    assert outcome.err.startswith(
        f"ovmsx: cannot reach the Hugging Face hub at http://127.0.0.1:{closed_port}: "
    )
    assert "HF_ENDPOINT" in outcome.err
    assert not (tmp_path / "OpenVINO").exists()


def test_a_gated_repository_needs_hf_token(
    hub: FakeHub,
    llm_files: dict[str, bytes],
    ovmsx_mode: Run,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hub.add_repo(REPO, llm_files, gated=True)

    anonymous = _pull(ovmsx_mode, tmp_path)
    assert anonymous.code == EX_FAILURE
    assert f"ovmsx: repository {REPO} is gated: accept its conditions" in anonymous.err
    assert "set HF_TOKEN" in anonymous.err

    monkeypatch.setenv("HF_TOKEN", "hf_someone_else")
    refused = _pull(ovmsx_mode, tmp_path)
    assert refused.code == EX_FAILURE
    assert "the account of HF_TOKEN has not been granted access" in refused.err

    monkeypatch.setenv("HF_TOKEN", hub.token)
    granted = _pull(ovmsx_mode, tmp_path)
    assert granted.code == 0, granted.err
    assert (tmp_path / REPO / "openvino_model.bin").read_bytes() == llm_files["openvino_model.bin"]
    authorizations = {get.headers.get("authorization") for get in hub.downloads()}
    assert authorizations == {f"Bearer {hub.token}"}


def test_a_model_that_is_not_openvino_is_refused_with_the_conversion_to_run(
    hub: FakeHub, ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(
        "acme/tiny-llm",
        {"model.safetensors": b"\0" * 64, "config.json": b'{"architectures": ["X"]}'},
    )

    outcome = _pull(ovmsx_mode, tmp_path, "--task", "text_generation", repo="acme/tiny-llm")

    assert outcome.code == EX_FAILURE
    folder = tmp_path / "acme" / "tiny-llm"
    assert "acme/tiny-llm is not in OpenVINO format: it has no openvino_model.xml" in outcome.err
    assert (
        "    optimum-cli export openvino --model acme/tiny-llm --trust-remote-code "
        f"--weight-format int8 {folder}\n" in outcome.err
    )
    assert f"    convert_tokenizer acme/tiny-llm --with-detokenizer -o {folder}\n" in outcome.err
    assert hub.downloads() == []
    assert not folder.exists()


def test_the_conversion_advice_follows_the_task_and_weight_format(
    hub: FakeHub, ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo("acme/tiny-embed", {"model.safetensors": b"\0" * 64})

    outcome = _pull(
        ovmsx_mode, tmp_path, "--task", "embeddings", "--weight-format", "fp16",
        repo="acme/tiny-embed",
    )  # fmt: skip

    assert outcome.code == EX_FAILURE
    assert "--weight-format asks for a conversion of acme/tiny-embed" in outcome.err
    assert (
        "optimum-cli export openvino --task feature-extraction --library sentence_transformers "
        f"--model acme/tiny-embed --trust-remote-code --weight-format fp16 "
        f"{tmp_path / 'acme/tiny-embed'}" in outcome.err
    )


def test_a_converted_folder_is_used_as_it_is(
    hub: FakeHub, ir_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo("acme/tiny-llm", {"model.safetensors": b"\0" * 64})
    folder = tmp_path / "acme" / "tiny-llm"
    folder.mkdir(parents=True)  # what the advised optimum-cli command leaves
    for name, data in ir_files.items():
        (folder / name).write_bytes(data)

    outcome = _pull(
        ovmsx_mode, tmp_path, "--task", "text_generation", "--weight-format", "int4",
        repo="acme/tiny-llm",
    )  # fmt: skip

    assert outcome.code == 0, outcome.err
    assert (folder / "graph.pbtxt").is_file()
    assert hub.requests == []


def test_weight_format_is_refused_for_openvino_models(
    hub: FakeHub, ovmsx_mode: Run, tmp_path: Path
) -> None:
    outcome = _pull(ovmsx_mode, tmp_path, "--weight-format", "int4")

    assert outcome.code == EX_USAGE
    assert outcome.err == "ovmsx: --weight-format parameter unsupported for OpenVINO models.\n"
    assert hub.requests == []


def test_a_gguf_repository_needs_gguf_filename(
    hub: FakeHub, ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(
        "acme/tiny-GGUF",
        {
            "tiny-q4_k_m.gguf": b"GGUF",
            "tiny-f16-00001-of-00002.gguf": b"GGUF",
            "tiny-f16-00002-of-00002.gguf": b"GGUF",
        },
    )

    outcome = _pull(ovmsx_mode, tmp_path, repo="acme/tiny-GGUF")

    assert outcome.code == EX_FAILURE
    assert (
        "acme/tiny-GGUF holds GGUF files, not an OpenVINO model: pull one of them with "
        "--gguf_filename (tiny-f16-00001-of-00002.gguf, tiny-q4_k_m.gguf)" in outcome.err
    )


def test_gguf_filename_pulls_that_model_and_its_parts_only(
    hub: FakeHub, ovmsx_mode: Run, tmp_path: Path
) -> None:
    files = {
        "tiny-q4_k_m.gguf": b"GGUF q4",
        "tiny-f16-00001-of-00002.gguf": b"GGUF part one",
        "tiny-f16-00002-of-00002.gguf": b"GGUF part two",
    }
    hub.add_repo("acme/tiny-GGUF", files)

    outcome = _pull(
        ovmsx_mode, tmp_path, "--gguf_filename", "tiny-f16-00001-of-00002.gguf",
        repo="acme/tiny-GGUF",
    )  # fmt: skip

    assert outcome.code == 0, outcome.err
    folder = tmp_path / "acme" / "tiny-GGUF"
    downloaded = _files(folder)
    graph = downloaded.pop("graph.pbtxt").decode()
    assert downloaded == {name: data for name, data in files.items() if "f16" in name}
    assert 'models_path: "./tiny-f16-00001-of-00002.gguf"' in graph  # text_generation, implied

    again = _pull(
        ovmsx_mode, tmp_path, "--gguf_filename", "tiny-f16-00001-of-00002.gguf",
        repo="acme/tiny-GGUF",
    )  # fmt: skip
    assert again.code == 0
    assert f"Model files already exist. Skipping download to path: {folder}" in again.out
    assert len(hub.downloads()) == 2


def test_a_gguf_filename_the_repository_lacks_is_reported(
    hub: FakeHub, ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo("acme/tiny-GGUF", {"tiny-q4_k_m.gguf": b"GGUF"})

    outcome = _pull(
        ovmsx_mode, tmp_path, "--gguf_filename", "tiny-q8_0.gguf", repo="acme/tiny-GGUF"
    )

    assert outcome.code == EX_FAILURE
    assert (
        "acme/tiny-GGUF has no file tiny-q8_0.gguf; its GGUF files: tiny-q4_k_m.gguf" in outcome.err
    )


def test_a_folder_that_cannot_be_created_is_reported(
    hub: FakeHub, llm_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)
    not_a_folder = tmp_path / "models"
    not_a_folder.write_text("a file where the repository should be")

    outcome = _pull(ovmsx_mode, not_a_folder)

    assert outcome.code == EX_FAILURE
    assert outcome.err.startswith(f"ovmsx: cannot write to {not_a_folder}")
    assert "Not a directory" in outcome.err


def test_a_pull_that_serves_checks_its_task_before_downloading(
    hub: FakeHub, llm_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)

    outcome = ovmsx_mode(
        "--source_model", REPO, "--model_repository_path", tmp_path, "--task", "image_generation"
    )

    assert outcome.code == EX_USAGE
    assert "ovmsx does not serve this task yet" in outcome.err
    assert hub.requests == []


def test_a_pull_that_serves_hands_back_the_serving_command_line(
    hub: FakeHub, llm_files: dict[str, bytes], tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)
    argv = [
        "--source_model", REPO, "--model_repository_path", str(tmp_path), "--task",
        "text_generation", "--max_num_seqs", "4", "--rest_port", "8000", "--log_level", "DEBUG",
    ]  # fmt: skip

    mode = parse_other_mode(argv)
    assert mode is not None
    assert mode.serve_argv is not None
    options = parse_options(mode.serve_argv)  # what the ovmsx CLI does next
    result = pull(mode, out=io.StringIO())

    assert mode.serve_argv == (
        "--rest_port", "8000", "--log_level", "DEBUG",
        "--model_name", REPO, "--model_path", str(tmp_path / REPO),
    )  # fmt: skip
    assert options.model_name == REPO
    assert options.model_path == str(result.folder)
    assert options.task is None  # the folder is served through the graph.pbtxt written into it
    assert (result.folder / "graph.pbtxt").is_file()
    assert result.task == "text_generation"
    assert result.downloaded


def test_draft_model_is_pulled_beside_the_model(
    hub: FakeHub, llm_files: dict[str, bytes], ir_files: dict[str, bytes], ovmsx_mode: Run,
    tmp_path: Path,
) -> None:  # fmt: skip
    hub.add_repo(REPO, llm_files)
    hub.add_repo("OpenVINO/tiny-draft-ov", ir_files)

    outcome = _pull(
        ovmsx_mode, tmp_path, "--task", "text_generation", "--draft_source_model",
        "OpenVINO/tiny-draft-ov",
    )  # fmt: skip

    assert outcome.code == 0, outcome.err
    draft = tmp_path / REPO / "OpenVINO-tiny-draft-ov"
    assert _files(draft) == ir_files
    assert f"Draft model: OpenVINO-tiny-draft-ov downloaded to: {draft}" in outcome.out
    graph = (tmp_path / REPO / "graph.pbtxt").read_text()
    assert 'draft_models_path: "OpenVINO-tiny-draft-ov"' in graph


def test_the_repository_is_looked_at_before_anything_is_fetched(
    hub: FakeHub, llm_files: dict[str, bytes], ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo(REPO, llm_files)

    assert _pull(ovmsx_mode, tmp_path).code == 0

    paths = [request.path for request in hub.requests]
    info = paths.index(f"/api/models/{REPO}/revision/main")
    assert all("/resolve/" not in path for path in paths[:info])


def test_overwrite_deletes_nothing_when_the_pull_is_refused(
    hub: FakeHub, ovmsx_mode: Run, tmp_path: Path
) -> None:
    hub.add_repo("acme/tiny-llm", {"model.safetensors": b"\0" * 64})
    converted = tmp_path / "acme" / "tiny-llm" / "openvino_model.xml"
    converted.parent.mkdir(parents=True)
    converted.write_text("<net/>")

    for conversion in ([], ["--weight-format", "int4"]):
        outcome = _pull(
            ovmsx_mode, tmp_path, "--overwrite_models", "--task", "text_generation", *conversion,
            repo="acme/tiny-llm",
        )  # fmt: skip
        assert outcome.code == EX_FAILURE
        assert "optimum-cli export openvino" in outcome.err
        assert converted.read_text() == "<net/>"
