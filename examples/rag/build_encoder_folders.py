"""Build an embeddings folder and a rerank folder, laid out as `optimum-cli export openvino`
writes them for BERT-style models, from nothing but packages on the package index (no model
hub, no torch): random weights, so the vectors and scores mean nothing, but every file OVMS and
ovmsx read is there and openvino-genai's TextEmbeddingPipeline runs the embeddings folder.

    python examples/rag/build_encoder_folders.py models            # embed/ and rerank/, ~2 s
    python examples/rag/build_encoder_folders.py models --hidden 768 --layers 12 --vocab 30000

Each folder holds:
  openvino_model.xml/.bin       a BERT-like encoder: input_ids, attention_mask, token_type_ids
                                -> last_hidden_state [batch, tokens, hidden] (embed/) or
                                logits [batch, 1] from the first token (rerank/); masked
                                self-attention layers (ScaledDotProductAttention), so padding
                                changes nothing and a long input costs what it should
  openvino_tokenizer.xml/.bin   a WordPiece tokenizer adding [CLS] ... [SEP], converted by
  openvino_detokenizer.xml/.bin openvino-tokenizers
  tokenizer.json, tokenizer_config.json, config.json (with the special token ids)
  modules.json, 1_Pooling/      (embed/ only) sentence-transformers' modules: CLS pooling

Needs: openvino, openvino-tokenizers, tokenizers, transformers (no torch).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13 as ops

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "OpenVINO Model Server serves models over KServe and OpenAI compatible APIs.",
    "What is the capital of France? Paris is the capital of France.",
    "Berlin is the capital of Germany and Madrid is the capital of Spain.",
    "Retrieval augmented generation finds documents and answers questions from them.",
]
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "be", "do", "fu", "ga", "hi", "po"]


def build_tokenizer(vocab_size: int):
    """A WordPiece tokenizer of ``vocab_size`` tokens: specials, characters and their ``##``
    forms, the corpus's words, then pseudo-words. An explicit vocabulary, not a trained one,
    so the same arguments give the same ids."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    # No PyTorch is needed here: transformers' "advisory" notice that it is missing is off.
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    from transformers import PreTrainedTokenizerFast

    words = sorted({w for line in CORPUS for w in re.findall(r"\w+|[^\w\s]", line.lower())})
    chars = sorted({c for w in words for c in w} | set("abcdefghijklmnopqrstuvwxyz0123456789"))
    vocab = list(dict.fromkeys([*SPECIALS, *chars, *(f"##{c}" for c in chars), *words]))
    rng = np.random.default_rng(0)
    while len(vocab) < vocab_size:
        word = "".join(rng.choice(SYLLABLES, size=rng.integers(2, 5)))
        if word not in vocab:
            vocab.append(word)
    vocab = vocab[: max(vocab_size, len(SPECIALS) + 2 * len(chars))]
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=512,
    )


def build_encoder(
    vocab: int, hidden: int, layers: int, heads: int, positions: int, head: str, seed: int
) -> ov.Model:
    """``head``: "embed" (token states out) or "rerank" (one logit from the first token)."""
    rng = np.random.default_rng(seed)

    def weight(*shape: int) -> ov.Output:
        scale = 1.0 / np.sqrt(shape[0])
        return ops.constant((rng.standard_normal(shape) * scale).astype(np.float32)).output(0)

    def layer_norm(x: ov.Output) -> ov.Output:
        return ops.mvn(x, ops.constant(np.int64([-1])), True, 1e-12, "inside_sqrt").output(0)

    inputs = []
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        parameter = ops.parameter([-1, -1], ov.Type.i64, name=name)
        parameter.output(0).get_tensor().set_names({name})
        inputs.append(parameter)
    ids, mask, types = inputs
    # Positions 0..T-1 from the shape of input_ids.
    length = ops.gather(ops.shape_of(ids), ops.constant(np.int64(1)), ops.constant(np.int64(0)))
    positions_range = ops.range(ops.constant(np.int64(0)), length, ops.constant(np.int64(1)), "i64")
    x = ops.add(
        ops.add(
            ops.gather(weight(vocab, hidden), ids, ops.constant(np.int64(0))),
            ops.gather(weight(positions, hidden), positions_range, ops.constant(np.int64(0))),
        ),
        ops.gather(weight(2, hidden), types, ops.constant(np.int64(0))),
    ).output(0)
    x = layer_norm(x)
    # Additive attention mask [B, 1, 1, T]: 0 where attended, a large negative number elsewhere.
    keep = ops.convert(ops.unsqueeze(mask, ops.constant(np.int64([1, 2]))), ov.Type.f32)
    bias = ops.multiply(
        ops.subtract(ops.constant(np.float32(1)), keep), ops.constant(np.float32(-1e4))
    )
    head_size = hidden // heads
    for _ in range(layers):

        def split(t: ov.Output) -> ov.Output:
            shaped = ops.reshape(t, ops.constant(np.int64([0, 0, heads, head_size])), True)
            return ops.transpose(shaped, ops.constant(np.int64([0, 2, 1, 3]))).output(0)

        q, k, v = (
            split(ops.matmul(x, weight(hidden, hidden), False, False).output(0)) for _ in "qkv"
        )
        attended = ops.scaled_dot_product_attention(q, k, v, bias, causal=False)
        merged = ops.reshape(
            ops.transpose(attended, ops.constant(np.int64([0, 2, 1, 3]))),
            ops.constant(np.int64([0, 0, hidden])),
            True,
        )
        x = layer_norm(
            ops.add(x, ops.matmul(merged, weight(hidden, hidden), False, False)).output(0)
        )
        inner = ops.gelu(ops.matmul(x, weight(hidden, 4 * hidden), False, False), "erf")
        x = layer_norm(
            ops.add(x, ops.matmul(inner, weight(4 * hidden, hidden), False, False)).output(0)
        )
    if head == "embed":
        out, name = x, "last_hidden_state"
    else:
        first = ops.gather(x, ops.constant(np.int64(0)), ops.constant(np.int64(1)))
        out, name = ops.matmul(ops.tanh(first), weight(hidden, 1), False, False).output(0), "logits"
    result = ops.result(out)
    result.output(0).get_tensor().set_names({name})
    return ov.Model([result], inputs, f"tiny_{head}")


def write_pooling(folder: Path, hidden: int) -> None:
    """The files sentence-transformers exports beside an embeddings model: its modules, and
    ``1_Pooling/config.json``, which says the vector is the [CLS] token's (the pooling the
    example's graph names too)."""
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    (folder / "modules.json").write_text(json.dumps(modules, indent=2))
    modes = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "lasttoken")
    pooling = {"word_embedding_dimension": hidden}
    pooling |= {f"pooling_mode_{mode}": mode == "cls_token" for mode in modes}
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2))


def write_encoder_folders(
    root: Path, hidden: int = 32, layers: int = 1, heads: int = 2, vocab: int = 200
) -> dict[str, Path]:
    """Write ``root/embed`` and ``root/rerank``; returns both paths by name."""
    from openvino_tokenizers import convert_tokenizer

    tokenizer = build_tokenizer(vocab)
    size = len(tokenizer)
    folders = {}
    for head, seed in (("embed", 1), ("rerank", 2)):
        folder = root / head
        folder.mkdir(parents=True, exist_ok=True)
        tokenizer.save_pretrained(folder)
        ov_tokenizer, ov_detokenizer = convert_tokenizer(tokenizer, with_detokenizer=True)
        ov.save_model(ov_tokenizer, folder / "openvino_tokenizer.xml")
        ov.save_model(ov_detokenizer, folder / "openvino_detokenizer.xml")
        model = build_encoder(size, hidden, layers, heads, 512, head, seed)
        ov.save_model(model, folder / "openvino_model.xml", compress_to_fp16=False)
        architecture = "BertModel" if head == "embed" else "BertForSequenceClassification"
        config = {
            "architectures": [architecture],
            "model_type": "bert",
            "hidden_size": hidden,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "vocab_size": size,
            "max_position_embeddings": 512,
            "pad_token_id": tokenizer.pad_token_id,
            "bos_token_id": tokenizer.cls_token_id,
            "eos_token_id": tokenizer.sep_token_id,
            "sep_token_id": tokenizer.sep_token_id,
        }
        (folder / "config.json").write_text(json.dumps(config, indent=2))
        if head == "embed":
            write_pooling(folder, hidden)
        folders[head] = folder
    return folders


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("root", type=Path, help="where embed/ and rerank/ are written")
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=200)
    args = parser.parse_args()
    folders = write_encoder_folders(args.root, args.hidden, args.layers, args.heads, args.vocab)
    for name, folder in folders.items():
        print(f"{name}: {folder}")


if __name__ == "__main__":
    main()
