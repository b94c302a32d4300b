"""The generative-AI tests start real servers on LLM folders they build (about a second each):
a scripted model whose answer is fixed (exact text, stop strings, finish reasons, usage) and a
readable random one that never stops on its own (lengths, concurrency, disconnects).

One server serves every module that only sends requests (``llm``); tests about the process
(restarts, flags, reload) start servers of their own.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "serving"), str(TESTS / "rest")]

from llm_graphs import SCRIPT, llm_servable  # noqa: E402
from rest_process import RestProcess, rest_served  # noqa: E402
from serving_models import add_constant, save  # noqa: E402


@pytest.fixture(scope="session")
def llm_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("llm")
    return {
        "scripted": llm_servable(root / "scripted", script=SCRIPT),
        "readable": llm_servable(root / "readable", max_tokens_limit=4000),
    }


@pytest.fixture(scope="session")
def llm_config(llm_folders: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("llm_config")
    save(add_constant([1, 10], 1.0), root / "add_one")
    config = {
        "model_config_list": [
            {"config": {"name": "add_one", "base_path": str(root / "add_one")}},
            # An LLM graph folder listed as a model, as OVMS finds it.
            {"config": {"name": "scripted", "base_path": str(llm_folders["scripted"])}},
        ],
        "mediapipe_config_list": [{"name": "readable", "base_path": str(llm_folders["readable"])}],
    }
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path


@pytest.fixture(scope="session")
def llm(llm_config: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestProcess]:
    with rest_served(
        ["--config_path", str(llm_config)], tmp_path_factory.mktemp("llm_run")
    ) as server:
        yield server


@pytest.fixture(scope="session")
def encoder_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from encoder_graphs import encoder_folders

    return encoder_folders(tmp_path_factory.mktemp("encoders"))


@pytest.fixture(scope="session")
def encoders(
    encoder_folders: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RestProcess]:
    """One server with the embeddings and rerank graphs the encoder tests ask: ``embed`` and
    ``rerank`` (graphs inside the model folders, models_path "./"), ``embed_mean`` (MEAN
    pooling, not normalised), ``embed_truncated`` and ``embed_limited`` (an 8-token limit,
    with and without truncate), ``rerank_chunked`` (16-token rows: long documents chunk)."""
    from encoder_graphs import EMBEDDINGS_GRAPH, RERANK_GRAPH, graph_folder

    root = tmp_path_factory.mktemp("encoder_config")
    embed, rerank = encoder_folders["embed"], encoder_folders["rerank"]
    graph_folder(embed, EMBEDDINGS_GRAPH, "./")
    graph_folder(rerank, RERANK_GRAPH, "./")
    graphs = {
        "embed_mean": graph_folder(
            root / "mean",
            EMBEDDINGS_GRAPH,
            str(embed),
            pooling="MEAN",
            normalize_embeddings="false",
        ),
        "embed_truncated": graph_folder(
            root / "truncated", EMBEDDINGS_GRAPH, str(embed), max_length=8, truncate="true"
        ),
        "embed_limited": graph_folder(root / "limited", EMBEDDINGS_GRAPH, str(embed), max_length=8),
        "rerank_chunked": graph_folder(
            root / "chunked", RERANK_GRAPH, str(rerank), max_position_embeddings=16
        ),
    }
    config = {
        "model_config_list": [
            {"config": {"name": "embed", "base_path": str(embed)}},
            {"config": {"name": "rerank", "base_path": str(rerank)}},
        ],
        "mediapipe_config_list": [
            {"name": name, "base_path": str(folder)} for name, folder in graphs.items()
        ],
    }
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    with rest_served(
        ["--config_path", str(path)], tmp_path_factory.mktemp("encoder_run")
    ) as server:
        yield server


@pytest.fixture(autouse=True)
def _close_openai_clients() -> Iterator[None]:
    from openai_clients import close_all

    yield
    close_all()
