"""Embeddings and rerank graphs that cannot be served: each is refused at load with OVMS's code
and a message naming what is wrong, and the rest of the config keeps serving."""

from __future__ import annotations

import json
import shutil

import pytest
from encoder_graphs import EMBEDDINGS_GRAPH, RERANK_GRAPH
from rest_process import RestProcess, rest_served


def _graph(template: str, models_path: str, **options) -> str:
    extra = "".join(f",\n      {name}: {value}" for name, value in options.items())
    return template.format(models_path=models_path, options=extra)


def _without_options(text: str) -> str:
    start = text.index("  node_options")
    end = text.index("\n  }\n", start) + len("\n  }\n")
    return text[:start] + text[end:]


EMBED, RERANK, NO_MODEL = "{embed}", "{rerank}", "{no_model}"
# graph name -> (graph text, what its load error says)
BROKEN = {
    "no_options": (
        _without_options(_graph(EMBEDDINGS_GRAPH, EMBED)),
        "LLM node is missing its node_options",
    ),
    "no_name": (
        _graph(EMBEDDINGS_GRAPH, EMBED).replace('  name: "EmbeddingsExecutor"\n', ""),
        "LLM node is missing its name",
    ),
    "missing_folder": (
        _graph(EMBEDDINGS_GRAPH, "./nowhere"),
        "LLM node models_path does not exist",
    ),
    "zero_length": (_graph(EMBEDDINGS_GRAPH, EMBED, max_length=0), "max_length must be greater"),
    "bad_plugin_config": (
        _graph(EMBEDDINGS_GRAPH, EMBED, plugin_config='"{not json"'),
        "plugin_config",
    ),
    "no_model_file": (_graph(EMBEDDINGS_GRAPH, NO_MODEL), "openvino_model.xml does not exist"),
    "embeddings_of_a_reranker": (
        _graph(EMBEDDINGS_GRAPH, RERANK),
        "is not [batch, tokens, hidden]",
    ),
    "rerank_of_an_embedder": (_graph(RERANK_GRAPH, EMBED), "the model has no output named logits"),
    "rerank_too_short": (
        _graph(RERANK_GRAPH, RERANK, max_position_embeddings=8),
        "max_position_embeddings should be larger than 2 * NUMBER_OF_SPECIAL_TOKENS",
    ),
    "rerank_two_lengths": (
        _graph(RERANK_GRAPH, RERANK, max_position_embeddings=64, max_length=64),
        "max_length and max_position_embeddings name the same setting",
    ),
}


@pytest.fixture(scope="module")
def broken(encoder_folders, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("broken_encoders")
    no_model = root / "no_model"
    shutil.copytree(encoder_folders["embed"], no_model)
    (no_model / "openvino_model.xml").unlink()
    (no_model / "graph.pbtxt").unlink(missing_ok=True)
    paths = {"embed": encoder_folders["embed"], "rerank": encoder_folders["rerank"]}
    graphs = []
    for name, (text, _) in BROKEN.items():
        folder = root / name
        folder.mkdir()
        (folder / "graph.pbtxt").write_text(
            text.replace(EMBED, str(paths["embed"]))
            .replace(RERANK, str(paths["rerank"]))
            .replace(NO_MODEL, str(no_model))
        )
        graphs.append({"name": name, "base_path": str(folder)})
    good = root / "good"
    good.mkdir()
    (good / "graph.pbtxt").write_text(_graph(EMBEDDINGS_GRAPH, str(paths["embed"])))
    graphs.append({"name": "good", "base_path": str(good)})
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": graphs}))
    with rest_served(["--config_path", str(config)], root) as server:
        yield server


def _post(server: RestProcess, document: dict):
    return server.request(
        "POST", "/v3/embeddings", json.dumps(document), {"Content-Type": "application/json"}
    )


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_encoder_graph_is_refused_with_its_reason(broken: RestProcess, name) -> None:
    assert broken.request("GET", f"/v2/models/{name}/ready").status != 200
    reply = _post(broken, {"model": name, "input": "hi"})
    assert reply.status == 500
    assert reply.error.startswith(f"Mediapipe is not loaded yet - {name}: ")
    assert BROKEN[name][1] in reply.error


def test_the_rest_of_the_config_serves(broken: RestProcess) -> None:
    reply = _post(broken, {"model": "good", "input": ["hi", "there"]})
    assert reply.status == 200, reply.body
    assert len(reply.json()["data"]) == 2
