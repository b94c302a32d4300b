"""The ``graph.pbtxt`` a pull writes: the graph ovmsx builds in memory for ``--task`` from the
same flags, with the model named relative to the graph (``models_path: "./"``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ovmsx.config.errors import UsageError
from ovmsx.genai.task_graph import (
    EncoderFlags,
    TextGenerationFlags,
    encoder_graph,
    text_generation_graph,
)
from ovmsx.graph.graph_config import parse_graph
from ovmsx.pull import parse_other_mode
from ovmsx.pull.graph_files import graph_text


def _request(*task_flags: str):
    mode = parse_other_mode(
        [
            "--pull",
            "--source_model",
            "OpenVINO/m",
            "--model_repository_path",
            "/models",
            *task_flags,
        ]
    )
    assert mode is not None
    assert mode.pull is not None
    return mode.pull


def _render(*task_flags: str) -> str:
    request = _request(*task_flags)
    assert request.task is not None
    return graph_text(
        request.task,
        request.flags,
        target_device=request.target_device,
        plugin_config=request.plugin_config,
        cache_dir=request.cache_dir,
    )


def test_text_generation_is_the_in_memory_graph_with_a_relative_path() -> None:
    written = _render(
        "--task", "text_generation", "--max_num_seqs", "8", "--cache_size", "2",
        "--enable_prefix_caching", "false", "--target_device", "GPU", "--plugin_config",
        '{"NUM_STREAMS": "2"}', "--kv_cache_precision", "u8",
    )  # fmt: skip

    flags = TextGenerationFlags(
        max_num_seqs=8, cache_size=2, enable_prefix_caching=False, kv_cache_precision="u8"
    )
    in_memory = text_generation_graph(
        Path("/abs/model"), flags, device="GPU", plugin_config='{"NUM_STREAMS": "2"}'
    )
    assert written == in_memory.replace('models_path: "/abs/model"', 'models_path: "./"')
    parse_graph(written, "graph.pbtxt")


def test_cache_dir_goes_into_the_plugin_config() -> None:
    written = _render("--task", "text_generation", "--cache_dir", "/cache")

    assert 'plugin_config: "{\\"CACHE_DIR\\": \\"/cache\\"}"' in written


@pytest.mark.parametrize(
    ("task", "flags", "expected"),
    [
        ("embeddings", ["--pooling", "LAST", "--normalize", "false"],
         EncoderFlags(num_streams=2, pooling="LAST", normalize=False)),
        ("rerank", ["--max_allowed_chunks", "7"],
         EncoderFlags(num_streams=2, max_allowed_chunks=7)),
    ],
)  # fmt: skip
def test_encoder_graphs_are_the_in_memory_graphs_with_a_relative_path(
    task: str, flags: list[str], expected: EncoderFlags
) -> None:
    written = _render("--task", task, "--num_streams", "2", *flags)

    in_memory = encoder_graph(task, Path("/abs/model"), expected)
    assert written == in_memory.replace('models_path: "/abs/model"', 'models_path: "./"')
    assert 'models_path: "./"' in written


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--task", "rerank", "--max_num_seqs", "4"],
         "task: rerank - error parsing options - unmatched arguments : --max_num_seqs, "),
        (["--task", "text_generation", "--pooling", "CLS", "--num_streams", "2"],
         "task: text_generation - error parsing options - unmatched arguments : --pooling, "
         "--num_streams, "),
        (["--task", "rerank", "--pooling", "CLS"], "--pooling is not a flag of --task rerank"),
        (["--task", "embeddings", "--pooling", "SUM"],
         "--pooling SUM: choose one of CLS, LAST, MEAN"),
        (["--task", "text_generation", "--plugin_config", "[1]"],
         "--plugin_config must be a JSON object"),
        (["--task", "image_generation"], "--task image_generation: ovmsx does not write graphs"),
    ],
)  # fmt: skip
def test_flags_that_make_no_graph_are_refused(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as refused:
        _render(*argv)
    assert str(refused.value).startswith(message)


def test_unknown_task_is_refused_with_ovms_message() -> None:
    with pytest.raises(
        UsageError, match=r"^error parsing options - --task parameter unsupported value: chat$"
    ):
        _request("--task", "chat")
