"""A GGUF file served as OVMS serves one: an LLM graph whose ``models_path`` names the ``.gguf``
file, or the folder that holds it. openvino-genai builds the model and its tokenizer from the
file; the server's greedy answers must equal openvino-genai's own, in process, for the same
token ids.

The file is a tiny random llama written by bench/llm_gguf.py (needs the ``gguf`` package); its
model never emits its end-of-sequence token, so every answer runs to ``max_tokens``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from llm_graphs import graph_text
from rest_process import RestProcess, rest_served

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from llm_gguf import IM_END, write_gguf

PROMPT = "What is the capital of France?"
MESSAGES = [{"role": "user", "content": "Tell me a short story about a robot."}]
MAX_TOKENS = 16
# The graph names, and how each one's models_path reaches the file.
BY_FILE, BY_FOLDER = "gguf_file", "gguf_folder"
HEADERS = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def gguf_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gguf(
        tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf",
        hidden=64,
        layers=2,
        heads=4,
        kv_heads=2,
        vocab=512,
        dtype="f16",
        seed=0,
    )


@pytest.fixture(scope="module")
def gguf_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("gguf_graphs")
    # models_path names the file, relative to the graph's folder.
    by_file = root / BY_FILE
    by_file.mkdir()
    shutil.copy(gguf_path, by_file / gguf_path.name)
    (by_file / "graph.pbtxt").write_text(graph_text(models_path=f"./{gguf_path.name}"))
    # models_path names a folder holding nothing but the file.
    by_folder = root / BY_FOLDER
    (by_folder / "model").mkdir(parents=True)
    shutil.copy(gguf_path, by_folder / "model" / gguf_path.name)
    (by_folder / "graph.pbtxt").write_text(graph_text(models_path="./model"))

    graphs = [{"name": name, "base_path": str(root / name)} for name in (BY_FILE, BY_FOLDER)]
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": graphs}))
    with rest_served(["--config_path", str(config)], root) as server:
        yield server


@pytest.fixture(scope="module")
def reference(gguf_path: Path):
    """openvino-genai's continuous-batching pipeline on the same file, in this process."""
    import openvino_genai as genai

    return genai.ContinuousBatchingPipeline(str(gguf_path), genai.SchedulerConfig(), "CPU")


def greedy(pipeline, prompt: str, add_special_tokens: bool) -> tuple[str, int, int]:
    """(text, prompt tokens, generated tokens) of a greedy generation of MAX_TOKENS tokens."""
    import openvino_genai as genai

    tokenizer = pipeline.get_tokenizer()
    ids = tokenizer.encode(prompt, add_special_tokens=add_special_tokens).input_ids
    config = genai.GenerationConfig(max_new_tokens=MAX_TOKENS)
    config.apply_chat_template = False
    (result,) = pipeline.generate([ids], [config])
    generated = list(result.m_generation_ids[0])
    return tokenizer.decode(generated), ids.shape[1], len(generated)


def post(server: RestProcess, path: str, body: dict) -> dict:
    reply = server.request("POST", path, json.dumps(body), HEADERS)
    assert reply.status == 200, reply.body
    document = reply.json()
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize("model", [BY_FILE, BY_FOLDER])
def test_completions_answer_as_openvino_genai_does(gguf_server, reference, model: str) -> None:
    # The server tokenizes a completions prompt with the tokenizer's special tokens.
    text, prompt_tokens, generated = greedy(reference, PROMPT, add_special_tokens=True)
    body = {"model": model, "prompt": PROMPT, "temperature": 0, "max_tokens": MAX_TOKENS}
    document = post(gguf_server, "/v3/completions", body)
    (choice,) = document["choices"]
    assert choice["text"] == text
    assert choice["finish_reason"] == "length"
    assert generated == MAX_TOKENS
    assert document["usage"]["prompt_tokens"] == prompt_tokens
    assert document["usage"]["completion_tokens"] == MAX_TOKENS
    assert len(text) >= MAX_TOKENS  # every token of this model is printable ASCII


@pytest.mark.parametrize("model", [BY_FILE, BY_FOLDER])
def test_chat_uses_the_gguf_chat_template(gguf_server, reference, model: str) -> None:
    # The template comes from the file's tokenizer.chat_template; the server tokenizes the
    # rendered prompt without adding special tokens (the template wrote them).
    tokenizer = reference.get_tokenizer()
    prompt = tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True)
    assert prompt.startswith("<|im_start|>user\n")
    assert prompt.endswith("<|im_start|>assistant\n")
    text, prompt_tokens, _ = greedy(reference, prompt, add_special_tokens=False)
    body = {"model": model, "messages": MESSAGES, "temperature": 0, "max_tokens": MAX_TOKENS}
    document = post(gguf_server, "/v3/chat/completions", body)
    (choice,) = document["choices"]
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"] == text
    assert choice["finish_reason"] == "length"
    assert document["usage"]["prompt_tokens"] == prompt_tokens
    assert document["usage"]["completion_tokens"] == MAX_TOKENS
    assert IM_END not in choice["message"]["content"]


def test_a_streamed_chat_adds_up_to_the_same_answer(gguf_server, reference) -> None:
    tokenizer = reference.get_tokenizer()
    prompt = tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True)
    text, _, _ = greedy(reference, prompt, add_special_tokens=False)
    body = {
        "model": BY_FOLDER,
        "messages": MESSAGES,
        "temperature": 0,
        "max_tokens": MAX_TOKENS,
        "stream": True,
    }
    reply = gguf_server.request("POST", "/v3/chat/completions", json.dumps(body), HEADERS)
    assert reply.status == 200, reply.body
    events = [line[len(b"data: ") :] for line in reply.body.split(b"\n") if line]
    assert events[-1] == b"[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    streamed = "".join(
        chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks if chunk["choices"]
    )
    assert streamed == text
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"


def test_the_file_is_laid_out_as_llama_cpp_reads_llama(gguf_path: Path) -> None:
    """Tensor names from llama.cpp's llama architecture (as the gguf package lists them), and
    GGUF's dimension order: innermost first, so a [out, in] matmul weight reads [in, out]."""
    from gguf import MODEL_ARCH, MODEL_TENSORS, TENSOR_NAMES, GGUFReader

    reader = GGUFReader(gguf_path)
    fields = {name: field.contents() for name, field in reader.fields.items()}
    assert fields["general.architecture"] == "llama"
    assert fields["tokenizer.ggml.model"] == "gpt2"
    assert fields["tokenizer.ggml.tokens"][fields["tokenizer.ggml.eos_token_id"]] == IM_END
    layers = fields["llama.block_count"]
    known = set()
    for tensor in MODEL_TENSORS[MODEL_ARCH.LLAMA]:
        pattern = TENSOR_NAMES[tensor]
        known.update(pattern.format(bid=block) + ".weight" for block in range(layers))
    shapes = {tensor.name: [int(n) for n in tensor.shape] for tensor in reader.tensors}
    assert set(shapes) <= known
    hidden, ffn = fields["llama.embedding_length"], fields["llama.feed_forward_length"]
    kv = fields["llama.attention.head_count_kv"] * hidden // fields["llama.attention.head_count"]
    vocab = len(fields["tokenizer.ggml.tokens"])
    assert shapes["token_embd.weight"] == [hidden, vocab]
    assert shapes["output.weight"] == [hidden, vocab]
    assert shapes["blk.0.attn_k.weight"] == [hidden, kv]
    assert shapes["blk.1.ffn_gate.weight"] == [hidden, ffn]
    assert shapes["blk.1.ffn_down.weight"] == [ffn, hidden]
    assert len(shapes) == 3 + 9 * layers  # token_embd, output_norm, output; 9 a block
