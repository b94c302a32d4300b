"""/v3/tokenize naming an embeddings or rerank graph: OVMS tokenizes with that graph's own
tokenizer (it does not read the body as an embeddings or rerank request); checked against
openvino-genai's Tokenizer on the same folder."""

from __future__ import annotations

import json

import openvino_genai as genai
import pytest
from rest_process import RestProcess

TEXTS = ["Paris is the capital of France.", "a fox"]
NODE = {"embed": "EmbeddingsExecutor", "rerank": "RerankExecutor"}


def tokenize(server: RestProcess, document: dict):
    body = json.dumps(document)
    return server.request("POST", "/v3/tokenize", body, {"Content-Type": "application/json"})


def ids(folder, text: str, **options) -> list[int]:
    encoded = genai.Tokenizer(str(folder)).encode(text, **options)
    return encoded.input_ids.data[0].tolist()


@pytest.mark.parametrize("graph", ["embed", "rerank"])
def test_each_text_gets_the_graphs_own_ids(encoders, encoder_folders, graph: str) -> None:
    folder = encoder_folders[graph]
    reply = tokenize(encoders, {"model": graph, "text": TEXTS})
    assert reply.status == 200, reply.body
    assert reply.json() == {"tokens": [ids(folder, text) for text in TEXTS]}
    reply = tokenize(encoders, {"model": graph, "text": TEXTS[0], "add_special_tokens": False})
    assert reply.json() == {"tokens": ids(folder, TEXTS[0], add_special_tokens=False)}


def test_max_length_truncates_and_padding_fills_to_the_graphs_length(
    encoders, encoder_folders
) -> None:
    truncated = ids(encoder_folders["embed"], TEXTS[0], max_length=3, truncation=True)
    assert len(truncated) == 3
    reply = tokenize(encoders, {"model": "embed", "text": TEXTS[0], "max_length": 3})
    assert reply.json() == {"tokens": truncated}
    # embed_limited serves at most 8 tokens: padding without max_length fills to that.
    reply = tokenize(encoders, {"model": "embed_limited", "text": "fox", "pad_to_max_length": True})
    assert reply.status == 200, reply.body
    assert len(reply.json()["tokens"]) == 8


@pytest.mark.parametrize("graph", ["embed", "rerank"])
def test_a_wrong_tokenize_request_gets_the_tokenize_message(encoders, graph: str) -> None:
    reply = tokenize(encoders, {"model": graph, "input": "a", "query": "b"})
    assert reply.status == 400
    assert reply.error.endswith("text field is required"), reply.error
    assert NODE[graph] in reply.error
    reply = tokenize(encoders, {"model": graph, "text": "a", "max_length": 2**31})
    assert reply.status == 400
    assert "max_length value can't be greater than 2147483647" in reply.error


def test_the_graph_still_embeds_after_tokenize_requests(encoders) -> None:
    padded = tokenize(encoders, {"model": "embed", "text": ["x"] * 4, "pad_to_max_length": True})
    assert padded.status == 200, padded.body
    reply = encoders.request(
        "POST",
        "/v3/embeddings",
        json.dumps({"model": "embed", "input": "fox"}),
        {"Content-Type": "application/json"},
    )
    assert reply.status == 200, reply.body
