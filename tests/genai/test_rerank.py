"""/v3/rerank against the same arithmetic done here in numpy on the model's logits: the rows
OVMS builds (``BOS query EOS SEP document EOS``, long documents chunked), tokenized by the
folder's tokenizer.json through the tokenizers package, a sigmoid of each row's logit, the
best chunk per document; Cohere's request form over plain HTTP, every option and error."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from rest_process import RestProcess, rest_served
from tokenizers import Tokenizer

QUERY = "What is the capital of France?"
DOCUMENTS = [
    "Berlin is the capital of Germany.",
    "Paris is the capital of France.",
    "The quick brown fox jumps over the lazy dog.",
    "Madrid is the capital of Spain and Paris is the capital of France.",
]
NODE_FAILED = (
    "Mediapipe execution failed. MP status - {code}: CalculatorGraph::Run() failed: \n"
    'Calculator::Process() for node "RerankExecutor" failed: '
)


def expected_scores(folder: Path, query: str, documents: list[str], length: int = 512):
    """OVMS's scoring, step by step, on the model run here."""
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    config = json.loads((folder / "config.json").read_text())
    bos, eos, sep = config["bos_token_id"], config["eos_token_id"], config["sep_token_id"]
    pad = config["pad_token_id"]

    def ids(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False).ids

    question = ids(query)[: length // 2]
    room = length - len(question) - 4
    rows, owners = [], []
    for index, document in enumerate(documents):
        tokens = ids(document)
        for start in range(0, max(1, len(tokens)), room):
            rows.append([bos, *question, eos, sep, *tokens[start : start + room], eos])
            owners.append(index)
    width = max(len(row) for row in rows)
    input_ids = np.full((len(rows), width), pad, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for line, row in enumerate(rows):
        input_ids[line, : len(row)] = row
        mask[line, : len(row)] = 1
    compiled = ov.Core().compile_model(str(folder / "openvino_model.xml"), "CPU")
    inputs = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": 0 * input_ids}
    logits = compiled(inputs)["logits"]
    sigmoid = 1 / (1 + np.exp(-logits[:, 0].astype(np.float64)))
    best = np.zeros(len(documents))
    for owner, score in zip(owners, sigmoid, strict=True):
        best[owner] = max(best[owner], score)
    return best, len(rows)


def post(server: RestProcess, document: object, path: str = "/v3/rerank"):
    body = document if isinstance(document, (bytes, str)) else json.dumps(document)
    return server.request("POST", path, body, {"Content-Type": "application/json"})


def results(reply) -> list[dict]:
    assert reply.status == 200, reply.body
    assert set(reply.json()) == {"results"}
    return reply.json()["results"]


def test_scores_are_ovms_arithmetic_on_the_logits(encoders, encoder_folders) -> None:
    found = results(post(encoders, {"model": "rerank", "query": QUERY, "documents": DOCUMENTS}))
    expected, _ = expected_scores(encoder_folders["rerank"], QUERY, DOCUMENTS)
    # Every document, best first.
    assert [item["index"] for item in found] == list(np.argsort(-expected, kind="stable"))
    got = {item["index"]: item["relevance_score"] for item in found}
    np.testing.assert_allclose([got[i] for i in range(len(DOCUMENTS))], expected, rtol=1e-5)
    assert all(set(item) == {"index", "relevance_score"} for item in found)


def test_long_documents_are_chunked_and_score_their_best_chunk(encoders, encoder_folders):
    documents = [" ".join(DOCUMENTS), DOCUMENTS[1]]
    expected, rows = expected_scores(encoder_folders["rerank"], QUERY, documents, length=16)
    assert rows > len(documents)  # the first document needed several chunks
    found = results(
        post(encoders, {"model": "rerank_chunked", "query": QUERY, "documents": documents})
    )
    got = {item["index"]: item["relevance_score"] for item in found}
    np.testing.assert_allclose([got[0], got[1]], expected, rtol=1e-5)


def test_top_n_and_return_documents(encoders: RestProcess) -> None:
    everything = results(
        post(encoders, {"model": "rerank", "query": QUERY, "documents": DOCUMENTS})
    )
    request = {
        "model": "rerank",
        "query": QUERY,
        "documents": DOCUMENTS,
        "top_n": 2,
        "return_documents": True,
    }
    found = results(post(encoders, request, "/v1/rerank"))
    assert [item["index"] for item in found] == [item["index"] for item in everything[:2]]
    for item in found:
        assert item["document"] == {"text": DOCUMENTS[item["index"]]}
    none = results(post(encoders, {**request, "top_n": 0}))
    assert none == []


def test_object_documents_score_by_their_text_and_come_back_whole(encoders) -> None:
    objects = [{"title": f"t{i}", "text": text} for i, text in enumerate(DOCUMENTS)]
    as_text = results(post(encoders, {"model": "rerank", "query": QUERY, "documents": DOCUMENTS}))
    request = {"model": "rerank", "query": QUERY, "documents": objects, "return_documents": True}
    found = results(post(encoders, request))
    assert [(i["index"], i["relevance_score"]) for i in found] == [
        (i["index"], i["relevance_score"]) for i in as_text
    ]
    assert all(item["document"] == objects[item["index"]] for item in found)


def test_ignored_fields_and_no_documents(encoders: RestProcess) -> None:
    request = {
        "model": "rerank",
        "query": QUERY,
        "documents": DOCUMENTS[:2],
        "rank_fields": ["text"],
        "max_chunks_per_doc": 3,
        "top_n": None,
    }
    assert len(results(post(encoders, request))) == 2
    assert results(post(encoders, {"model": "rerank", "query": QUERY, "documents": []})) == []


SAME_TYPE = "all documents have to be the same type (string or objects)"
# (fields replacing the valid request's, OVMS's message)
REQUEST_ERRORS = [
    ({"query": None}, "query is not a string"),
    ({"query": 5}, "query is not a string"),
    ({"documents": "a"}, "documents is not an array"),
    ({"documents": [1]}, "documents array element is neither string nor object"),
    ({"documents": ["a", {"title": "t", "text": "b"}]}, SAME_TYPE),
    ({"documents": [{"title": "t", "text": "b"}, "a"]}, SAME_TYPE),
    ({"documents": [{"text": "b"}]}, "document title field is missing"),
    ({"documents": [{"title": 1, "text": "b"}]}, "document title field have to be string"),
    ({"documents": [{"title": "t"}]}, "document text field is missing"),
    ({"documents": [{"title": "t", "text": 2}]}, "document text field have to be string"),
    ({"top_n": "2"}, "top_n accepts integer values"),
    ({"top_n": 1.5}, "top_n accepts integer values"),
    ({"top_n": -1}, "top_n must not be negative"),
    ({"rank_fields": "text"}, "rank_fields is not an array"),
    ({"rank_fields": [1]}, "rank_fields array element is not a string"),
    ({"return_documents": "yes"}, "return_documents accepts boolean values"),
    ({"max_chunks_per_doc": "3"}, "max_chunks_per_doc accepts integer values"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "message"), REQUEST_ERRORS)
def test_a_wrong_request_gets_ovms_message(encoders: RestProcess, fields, message) -> None:
    request = {"model": "rerank", "query": QUERY, "documents": DOCUMENTS[:2], **fields}
    reply = post(encoders, request)
    assert reply.status == 400
    assert reply.error == NODE_FAILED.format(code="INVALID_ARGUMENT") + message


@pytest.mark.parametrize("missing", ["query", "documents"])
def test_a_missing_field_is_named(encoders: RestProcess, missing: str) -> None:
    request = {"model": "rerank", "query": QUERY, "documents": DOCUMENTS}
    del request[missing]
    reply = post(encoders, request)
    assert reply.status == 400
    assert reply.error.endswith(f"{missing} field is missing in request")


def test_many_clients_at_once_get_their_own_scores(encoders, encoder_folders) -> None:
    queries = [f"{QUERY} {'fox ' * i}" for i in range(24)]

    def one(query: str) -> list[float]:
        found = results(post(encoders, {"model": "rerank", "query": query, "documents": DOCUMENTS}))
        return [item["relevance_score"] for item in sorted(found, key=lambda i: i["index"])]

    with ThreadPoolExecutor(12) as pool:
        got = np.array(list(pool.map(one, queries)))
    folder = encoder_folders["rerank"]
    expected = np.array([expected_scores(folder, query, DOCUMENTS)[0] for query in queries])
    # Batched with other clients' rows, a row is padded differently than alone, which moves
    # its float32 (or bf16, where the CPU has it) scores by up to ~1e-4: each answer must be
    # that close to its own query's scores, and closer to them than to any other query's.
    np.testing.assert_allclose(got, expected, rtol=5e-4)
    distances = np.abs(got[:, None, :] - expected[None, :, :]).sum(axis=2)
    assert list(distances.argmin(axis=1)) == list(range(len(queries)))


def test_task_rerank_serves_a_folder_and_limits_its_chunks(encoder_folders, tmp_path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    for path in encoder_folders["rerank"].iterdir():
        if path.is_file() and path.name != "graph.pbtxt":
            (folder / path.name).symlink_to(path)
    args = ["--model_name", "r", "--model_path", str(folder), "--task", "rerank"]
    with rest_served([*args, "--max_allowed_chunks", "2"], tmp_path) as server:
        found = results(post(server, {"model": "r", "query": QUERY, "documents": DOCUMENTS[:2]}))
        expected, _ = expected_scores(folder, QUERY, DOCUMENTS[:2])
        got = {item["index"]: item["relevance_score"] for item in found}
        np.testing.assert_allclose([got[0], got[1]], expected, rtol=1e-5)
        reply = post(server, {"model": "r", "query": QUERY, "documents": DOCUMENTS[:3]})
        assert reply.status == 400
        assert reply.error == (
            NODE_FAILED.format(code="INTERNAL") + "Number of documents exceeds max_allowed_chunks"
        )
