"""Serving an LLM folder without a graph (``--task``, and the task told from config.json), and
the LLM example run as its README says."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from llm_graphs import SCRIPT, write_llm_folder, write_vlm_folder
from rest_process import RestProcess, rest_served
from serving_process import free_port, run_to_exit

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def bare_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scripted LLM folder with no graph.pbtxt."""
    return write_llm_folder(tmp_path_factory.mktemp("bare") / "model", script=SCRIPT)


def chat(server: RestProcess, document: dict = CHAT):
    return server.request(
        "POST", "/v3/chat/completions", json.dumps(document), {"Content-Type": "application/json"}
    )


@pytest.mark.parametrize(
    "flags",
    [
        ["--task", "text_generation", "--max_num_seqs", "8", "--cache_size", "1"],
        [],  # the task is told from config.json's architectures
    ],
)
def test_a_folder_without_a_graph_is_served(bare_folder: Path, tmp_path: Path, flags) -> None:
    args = ["--model_name", "m", "--model_path", str(bare_folder), *flags]
    with rest_served(args, tmp_path) as server:
        reply = chat(server)
        assert reply.status == 200, reply.body
        assert reply.json()["choices"][0]["message"]["content"] == SCRIPT
        assert server.request("GET", "/v2/models/m/ready").status == 200
    assert not (bare_folder / "graph.pbtxt").exists()  # built in memory only


def test_max_tokens_limit_from_the_command_line(bare_folder: Path, tmp_path: Path) -> None:
    args = ["--model_name", "m", "--model_path", str(bare_folder), "--task", "text_generation"]
    with rest_served([*args, "--max_tokens_limit", "5"], tmp_path) as server:
        reply = chat(server, {**CHAT, "max_tokens": 6})
        assert reply.status == 400
        assert reply.json()["error"].endswith(
            "max_tokens exceeds limit provided in graph config: 5"
        )
        answer = chat(server).json()
        assert answer["choices"][0]["finish_reason"] == "length"
        assert answer["usage"]["completion_tokens"] == 5


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--task", "painting"], "Error: --task parameter unsupported value: painting"),
        (["--task", "image_generation"], "--task image_generation: ovmsx does not serve this"),
        (["--task", "embeddings", "--max_num_seqs", "4"], "--task embeddings takes no text_gen"),
        (["--task", "text_generation", "--pooling", "CLS"], "--pooling is not a flag of --task"),
        (["--task", "rerank", "--normalize", "true"], "--normalize is not a flag of --task rerank"),
        (["--task", "embeddings", "--pooling", "MAX"], "--pooling MAX: choose one of CLS, LAST"),
        (["--truncate", "true"], "--truncate needs --task embeddings or --task rerank"),
        (
            ["--task", "text_generation", "--tool_parser", "nope"],
            'Unsupported tool_parser: "nope". Supported tool parsers are: llama3',
        ),
    ],
)
def test_task_flag_errors(bare_folder: Path, tmp_path: Path, flags, message: str) -> None:
    args = ["--model_name", "m", "--model_path", str(bare_folder), *flags]
    code, output = run_to_exit([*args, "--rest_port", str(free_port())], tmp_path)
    assert code != 0
    assert message in output


def test_a_folder_whose_task_cannot_be_told_is_refused(bare_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "unknown"
    shutil.copytree(bare_folder, folder)
    (folder / "config.json").write_text(json.dumps({"architectures": ["Mystery"]}))
    code, output = run_to_exit(
        ["--model_name", "m", "--model_path", str(folder), "--rest_port", str(free_port())],
        tmp_path,
    )
    assert code != 0
    assert "Could not infer model task - specify --task value explicitly" in output


@pytest.mark.parametrize("flags", [["--task", "text_generation"], []])
def test_a_vlm_folder_is_told_a_vlm_with_or_without_the_task(tmp_path: Path, flags) -> None:
    # OVMS takes a LLaVA folder for text generation, then its pipeline for VLM_CB by its files.
    folder = write_vlm_folder(tmp_path / "vlm")
    args = ["--model_name", "v", "--model_path", str(folder), *flags]
    code, output = run_to_exit([*args, "--rest_port", str(free_port())], tmp_path)
    assert code == 1, output
    assert f"pipeline_type VLM_CB: {folder} holds a vision-language model" in output


def test_a_folder_that_does_not_load_says_why_without_build_paths(
    bare_folder: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(bare_folder, folder)
    (folder / "openvino_model.xml").write_text("<net name='broken'>")
    args = ["--model_name", "m", "--model_path", str(folder), "--task", "text_generation"]
    code, output = run_to_exit([*args, "--rest_port", str(free_port())], tmp_path)
    assert code != 0
    assert "Couldn't start model manager: m did not load" in output
    # openvino-genai's reason, without the build machine's source locations (OpenVINO's own
    # frontends print lines of theirs on stderr too: only ovmsx's report is checked).
    reasons = [line for line in output.splitlines() if "initialization failed" in line]
    assert reasons, output
    assert "openvino_model.xml" in reasons[0], output
    assert not re.search(r"\S+\.(?:cpp|hpp|cc|h):\d+", reasons[0]), reasons[0]


def run_example(
    tmp_path: Path, name: str, builds: list[list[str]], serve: list[str], client: str
) -> list[str]:
    """Copy examples/``name`` (and examples/llm, whose builder the others use) into
    ``tmp_path``, run the ``builds`` there (script paths relative to the copied examples/),
    serve with ``serve`` (``{example}`` standing for the copy), run its ``client`` against the
    server, and return what the client printed, line by line."""
    examples = tmp_path / "examples"
    for folder in {name, "llm"}:
        shutil.copytree(
            EXAMPLES / folder,
            examples / folder,
            ignore=shutil.ignore_patterns("models", "__pycache__"),
        )
    for build in builds:
        command = [sys.executable, *(part.format(examples=examples) for part in build)]
        subprocess.run(command, check=True, capture_output=True)
    args = [part.format(examples=examples) for part in serve]
    with rest_served(args, tmp_path) as server:
        done = subprocess.run(
            [sys.executable, str(examples / name / client), "--url", f"http://{server.url}/v3"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_llm_example_runs_as_its_readme_says(tmp_path: Path) -> None:
    lines = run_example(
        tmp_path,
        "llm",
        [["{examples}/llm/build_llm_folder.py", "{examples}/llm/models/tiny"]],
        ["--config_path", "{examples}/llm/config.json"],
        "client.py",
    )
    unary, finish, streamed = lines[:3]
    assert unary.startswith("unary: ")
    assert len(unary) > 20
    assert "finish_reason length" in finish
    assert streamed.startswith("streamed: ")
    assert len(streamed) > 20


def test_the_rag_example_runs_as_its_readme_says(tmp_path: Path) -> None:
    lines = run_example(
        tmp_path,
        "rag",
        [
            ["{examples}/rag/build_encoder_folders.py", "{examples}/rag/models"],
            ["{examples}/llm/build_llm_folder.py", "{examples}/rag/models/llm"],
        ],
        ["--config_path", "{examples}/rag/config.json"],
        "client.py",
    )
    assert lines[0] == "retrieved:"
    retrieved = [line.strip() for line in lines[1:4]]
    assert lines[4] == "reranked:"
    reranked = [line.strip().split(" ", 1) for line in lines[5:8]]
    # The reranker saw the three retrieved documents and scored each in (0, 1).
    assert sorted(text for _, text in reranked) == sorted(retrieved)
    assert all(0 < float(score) < 1 for score, _ in reranked)
    assert lines[8].startswith("answer: ")
    assert len(lines[8]) > 20


def test_the_agent_example_runs_as_its_readme_says(tmp_path: Path) -> None:
    model = "{examples}/agent/models/agent"
    lines = run_example(
        tmp_path,
        "agent",
        [["{examples}/agent/build_agent_model.py", model]],
        ["--model_name", "agent", "--model_path", model],
        "client.py",
    )
    assert lines[0] == (
        "tool call: get_weather({'city': 'Paris'}) -> "
        "{'city': 'Paris', 'sky': 'sunny', 'celsius': 21}"
    )
    assert lines[1].startswith("answer: ")
