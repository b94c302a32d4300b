"""/v3/embeddings against openvino-genai's TextEmbeddingPipeline run in this process on the
same folder: the official openai client and plain HTTP, every input form and option, OVMS's
errors, and many clients at once (batched into shared inferences)."""

from __future__ import annotations

import base64
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import openvino_genai as genai
import pytest
from openai_clients import client
from rest_process import RestProcess

TEXTS = [
    "Paris is the capital of France.",
    "The quick brown fox jumps over the lazy dog.",
    "What is the capital of Germany?",
]
NODE_FAILED = (
    "Mediapipe execution failed. MP status - INVALID_ARGUMENT: CalculatorGraph::Run() failed: \n"
    'Calculator::Process() for node "EmbeddingsExecutor" failed: '
)
POOLING = genai.TextEmbeddingPipeline.PoolingType


def reference(folder: Path, texts: list[str], pooling=POOLING.CLS, normalize=True) -> np.ndarray:
    config = genai.TextEmbeddingPipeline.Config()
    config.pooling_type = pooling
    config.normalize = normalize
    pipeline = genai.TextEmbeddingPipeline(str(folder), "CPU", config)
    return np.array(pipeline.embed_documents(texts), dtype=np.float32)


def token_ids(folder: Path, text: str, **options) -> list[int]:
    encoded = genai.Tokenizer(str(folder)).encode(text, add_special_tokens=True, **options)
    return encoded.input_ids.data[0].tolist()


def post(server: RestProcess, document: object, path: str = "/v3/embeddings"):
    body = document if isinstance(document, (bytes, str)) else json.dumps(document)
    return server.request("POST", path, body, {"Content-Type": "application/json"})


def vectors(reply) -> np.ndarray:
    assert reply.status == 200, reply.body
    data = reply.json()["data"]
    assert [item["index"] for item in data] == list(range(len(data)))
    return np.array([item["embedding"] for item in data], dtype=np.float32)


def test_the_openai_client_gets_openvino_genais_vectors(encoders, encoder_folders) -> None:
    answer = client(encoders).embeddings.create(model="embed", input=TEXTS)
    got = np.array([item.embedding for item in answer.data], dtype=np.float32)
    np.testing.assert_allclose(got, reference(encoder_folders["embed"], TEXTS), atol=1e-6)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert [item.index for item in answer.data] == [0, 1, 2]
    assert answer.model == "embed"
    # Special tokens count; padding does not.
    tokens = sum(len(token_ids(encoder_folders["embed"], text)) for text in TEXTS)
    assert answer.usage.prompt_tokens == answer.usage.total_tokens == tokens


def test_float_and_base64_carry_the_same_float32_values(encoders: RestProcess) -> None:
    as_floats = vectors(post(encoders, {"model": "embed", "input": TEXTS}))
    reply = post(encoders, {"model": "embed", "input": TEXTS, "encoding_format": "base64"})
    assert reply.status == 200, reply.body
    decoded = [
        np.frombuffer(base64.b64decode(item["embedding"]), dtype="<f4")
        for item in reply.json()["data"]
    ]
    np.testing.assert_array_equal(np.array(decoded), as_floats)


def test_a_string_and_the_v1_path_embed_one_document(encoders, encoder_folders) -> None:
    reply = post(encoders, {"model": "embed", "input": TEXTS[0]}, "/v1/embeddings")
    got = vectors(reply)
    assert got.shape == (1, 32)
    np.testing.assert_allclose(got, reference(encoder_folders["embed"], TEXTS[:1]), atol=1e-6)
    assert set(reply.json()) == {"object", "data", "model", "usage"}
    assert reply.json()["object"] == "list"


def test_token_ids_embed_as_the_text_they_came_from(encoders, encoder_folders) -> None:
    ids = [token_ids(encoder_folders["embed"], text) for text in TEXTS]
    from_ids = post(encoders, {"model": "embed", "input": ids})
    np.testing.assert_allclose(
        vectors(from_ids), vectors(post(encoders, {"model": "embed", "input": TEXTS})), atol=1e-6
    )
    assert from_ids.json()["usage"]["prompt_tokens"] == sum(len(row) for row in ids)
    # One document as a flat list of ids.
    one = post(encoders, {"model": "embed", "input": ids[1]})
    np.testing.assert_allclose(vectors(one)[0], vectors(from_ids)[1], atol=1e-6)


def test_mean_pooling_without_normalisation(encoders, encoder_folders) -> None:
    got = vectors(post(encoders, {"model": "embed_mean", "input": TEXTS}))
    expected = reference(encoder_folders["embed"], TEXTS, POOLING.MEAN, normalize=False)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert not np.allclose(np.linalg.norm(got, axis=1), 1.0)


def test_pooling_comes_from_the_folder_when_the_graph_sets_none(encoder_folders, tmp_path):
    from encoder_graphs import EMBEDDINGS_GRAPH, graph_folder
    from rest_process import rest_served

    folder = tmp_path / "model"
    folder.mkdir()
    for path in encoder_folders["embed"].iterdir():
        if path.is_file() and path.name != "graph.pbtxt":
            (folder / path.name).symlink_to(path)
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    graph_folder(folder, EMBEDDINGS_GRAPH, "./")
    with rest_served(["--model_name", "pooled", "--model_path", str(folder)], tmp_path) as server:
        got = vectors(post(server, {"model": "pooled", "input": TEXTS}))
    np.testing.assert_allclose(got, reference(folder, TEXTS, POOLING.MEAN), atol=1e-5)


def test_truncate_cuts_long_inputs_to_the_limit(encoders, encoder_folders) -> None:
    long_text = " ".join(TEXTS)
    cut = token_ids(encoder_folders["embed"], long_text, max_length=8, truncation=True)
    assert len(cut) == 8
    reply = post(encoders, {"model": "embed_truncated", "input": [long_text, TEXTS[0]]})
    assert reply.json()["usage"]["prompt_tokens"] == 16
    expected = vectors(post(encoders, {"model": "embed", "input": [cut]}))
    np.testing.assert_allclose(vectors(reply)[0], expected[0], atol=1e-6)
    # Token ids are cut as well.
    ids = token_ids(encoder_folders["embed"], long_text)
    from_ids = post(encoders, {"model": "embed_truncated", "input": [ids]})
    assert from_ids.json()["usage"]["prompt_tokens"] == 8


def test_an_input_longer_than_the_model_takes_is_refused(encoders, encoder_folders) -> None:
    long_text = " ".join(TEXTS)
    length = len(token_ids(encoder_folders["embed"], long_text))
    for document in ({"input": [TEXTS[0], long_text]}, {"input": [list(range(1, 12))]}):
        reply = post(encoders, {"model": "embed_limited", **document})
        assert reply.status == 400
        width = length if isinstance(document["input"][0], str) else 11
        assert reply.error == NODE_FAILED + f"Input length {width} longer than allowed 8"
    assert post(encoders, {"model": "embed_limited", "input": "fox"}).status == 200


# (input, OVMS's message)
INPUT_ERRORS = [
    ({"encoding_format": "float"}, "input field is required"),
    ({"input": 5}, "input should be string, array of strings or array of integers"),
    ({"input": {"text": "a"}}, "input should be string, array of strings or array of integers"),
    ({"input": []}, "input array should not be empty"),
    ({"input": ["a", 1]}, "input must be homogeneous"),
    ({"input": [1, "a"]}, "input must be homogeneous"),
    ({"input": [[1, 2], "a"]}, "input must be homogeneous"),
    ({"input": ["a", [1]]}, "input must be homogeneous"),
    ({"input": [1.5]}, "every element in input array should be either string or int"),
    ({"input": [None]}, "every element in input array should be either string or int"),
    # OVMS checks element by element: the first element that breaks the rule names it.
    ({"input": [[1], 1.5]}, "every element in input array should be either string or int"),
    ({"input": ["a", None, [1]]}, "every element in input array should be either string or int"),
    ({"input": ["a", [1], None]}, "input must be homogeneous"),
    ({"input": [[1], [2, 2.5]]}, "input must be homogeneous"),
    ({"input": [[1], []]}, "inner arrays in input should not be empty"),
    ({"input": [["a"]]}, "input must be either array of strings or array of array of integers"),
    ({"input": "a", "encoding_format": 1}, "encoding_format should be string"),
    ({"input": "a", "encoding_format": "int8"}, "encoding_format should either base64 or float"),
]


@pytest.mark.parametrize(("fields", "message"), INPUT_ERRORS)
def test_a_wrong_request_gets_ovms_message(encoders: RestProcess, fields, message) -> None:
    reply = post(encoders, {"model": "embed", **fields})
    assert reply.status == 400
    assert reply.error == NODE_FAILED + message


def test_token_ids_outside_the_vocabulary_are_refused(encoders, encoder_folders) -> None:
    size = len(genai.Tokenizer(str(encoder_folders["embed"])).get_vocab())
    for bad in (size, -1):
        reply = post(encoders, {"model": "embed", "input": [[2, bad, 3]]})
        assert reply.status == 400
        assert f"token id {bad} is outside the model's vocabulary [0, {size})" in reply.error
    assert post(encoders, {"model": "embed", "input": [[2, size - 1, 3]]}).status == 200


def test_dimensions_and_user_are_accepted_and_ignored(encoders: RestProcess) -> None:
    plain = vectors(post(encoders, {"model": "embed", "input": TEXTS}))
    extra = {"model": "embed", "input": TEXTS, "dimensions": 4, "user": "someone"}
    np.testing.assert_array_equal(vectors(post(encoders, extra)), plain)


def test_many_clients_at_once_each_get_their_own_vectors(encoders, encoder_folders) -> None:
    texts = [f"{TEXTS[i % 3]} {'fox ' * (i % 7)}" for i in range(48)]
    expected = reference(encoder_folders["embed"], texts)

    def one(index: int) -> np.ndarray:
        return vectors(post(encoders, {"model": "embed", "input": texts[index]}))[0]

    with ThreadPoolExecutor(16) as pool:
        got = np.array(list(pool.map(one, range(len(texts)))))
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_a_kserve_request_to_the_graph_is_told_where_to_go(encoders: RestProcess) -> None:
    body = {"inputs": [{"name": "input", "shape": [1], "datatype": "BYTES", "data": ["a"]}]}
    reply = encoders.infer("embed", body)
    assert reply.status >= 400
    assert "/v3/embeddings" in reply.body.decode()


def test_the_models_list_names_the_encoders(encoders: RestProcess) -> None:
    reply = encoders.request("GET", "/v3/models")
    names = {item["id"] for item in reply.json()["data"]}
    assert {"embed", "embed_mean", "rerank", "rerank_chunked"} <= names
