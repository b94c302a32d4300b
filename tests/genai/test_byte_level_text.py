"""Streamed text from token bytes gives openvino-genai's own decoded text, a character split
across tokens included, for the byte-level BPE tokenizers the tests' models use: an OpenVINO
folder's and the one openvino-genai builds from a GGUF file (whose detokenizer drops a lone
token holding part of a character, as a special token's text is dropped)."""

from __future__ import annotations

import sys
from pathlib import Path

import openvino_genai as genai
import pytest

from ovmsx.genai.engine.byte_level_text import ByteLevelText

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from llm_gguf import write_gguf

TEXTS = [
    "Paris is the capital. Ça!",
    "Grüße aus Köln — 東京 🙂 naïve café",
    "def f(x):\n    return {'a': [1, 2, 3]}\t# tabs",
]


@pytest.fixture(scope="module", params=["folder", "gguf"])
def tokenizer(request, llm_folders, tmp_path_factory) -> genai.Tokenizer:
    if request.param == "folder":
        return genai.Tokenizer(str(llm_folders["scripted"]))
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    write_gguf(path, hidden=64, layers=2, heads=4, kv_heads=2, vocab=512, dtype="f16", seed=0)
    pipeline = genai.ContinuousBatchingPipeline(str(path), genai.SchedulerConfig(), "CPU")
    return pipeline.get_tokenizer()


@pytest.mark.parametrize("text", TEXTS)
def test_streamed_token_by_token_equals_decode(tokenizer, text: str) -> None:
    spelled = ByteLevelText.of(tokenizer)
    assert spelled is not None
    ids = tokenizer.encode(text, add_special_tokens=False).input_ids.data.tolist()[0]
    stream = spelled.stream()
    pieces = [stream.push([token], final=False) for token in ids]
    pieces.append(stream.push([], final=True))
    assert "".join(pieces) == tokenizer.decode(ids) == text
    assert all("\ufffd" not in piece for piece in pieces)
    assert spelled.text(ids) == text


def test_a_character_split_across_tokens_waits_for_its_last_byte(tokenizer) -> None:
    spelled = ByteLevelText.of(tokenizer)
    ids = tokenizer.encode("Ç", add_special_tokens=False).input_ids.data.tolist()[0]
    assert len(ids) == 2  # both tokenizers spell it in two byte tokens
    stream = spelled.stream()
    assert stream.push(ids[:1], final=False) == ""
    assert stream.push(ids[1:], final=False) == "Ç"


def test_special_tokens_have_no_text(tokenizer) -> None:
    spelled = ByteLevelText.of(tokenizer)
    eos = tokenizer.get_eos_token_id()
    ids = tokenizer.encode("Paris", add_special_tokens=False).input_ids.data.tolist()[0]
    assert spelled.text([*ids, eos]) == tokenizer.decode([*ids, eos]) == "Paris"
