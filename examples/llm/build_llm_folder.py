"""Build a small LLM folder, laid out as `optimum-cli export openvino` writes one, from nothing
but packages on the package index (no model hub, no torch): random weights, so the text is
nonsense, but every file OVMS and ovmsx read is there and openvino-genai runs it.

    python examples/llm/build_llm_folder.py models/tiny            # ~1.2 s, ~1.5 MB
    python examples/llm/build_llm_folder.py models/mid --hidden 1024 --layers 12 --vocab 4096

The folder holds:
  openvino_model.xml/.bin        a decoder: input_ids, attention_mask, position_ids, beam_idx ->
                                 logits, its KV cache in ReadValue/Assign state, attention by
                                 ScaledDotProductAttention (what openvino-genai turns into paged
                                 attention for continuous batching)
  openvino_tokenizer.xml/.bin    a byte-level BPE tokenizer, converted by openvino-tokenizers
  openvino_detokenizer.xml/.bin
  tokenizer.json, tokenizer_config.json, chat_template.jinja
  config.json, generation_config.json

--script TEXT makes the model's answer fixed: whatever the prompt, it generates TEXT and then
its end-of-sequence token (each token of TEXT must appear once; see ``scripted_logits``), which
tests use to check exact text, stop strings and finish reasons. With --script-at N as well, the
script is placed by position instead, after a prompt of exactly N tokens, so its tokens may
repeat (a JSON tool call, a reasoning block). Without a script, the model emits readable random
words and never ends on its own.

Needs: openvino, openvino-tokenizers, tokenizers, transformers (no torch).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13 as ops
from openvino.op.util import Variable, VariableInfo

# A ChatML template, as many small chat models use.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
PAD, BOS_CHAT, EOS = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = [PAD, BOS_CHAT, EOS]
# The words the tokenizer learns merges from; anything else is spelled in bytes.
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Serving models over KServe and OpenAI compatible APIs with continuous batching.",
    "What is the capital of France? Paris is the capital of France.",
    "Hello, how are you today? I am fine, thank you. Tell me a story about a robot.",
    "0123456789 !@#$%^&*()_+-=[]{};':\",./<>? system user assistant",
]
MAX_POSITIONS = 4096


def build_tokenizer(vocab_size: int, extra_special: tuple[str, ...] = ()):
    """A byte-level BPE trained on CORPUS, as a transformers fast tokenizer; ``extra_special``
    tokens (a vision-language model's ``<image>``) follow SPECIAL_TOKENS."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    # This builder needs no PyTorch; transformers' notice that it is missing (an "advisory"
    # warning, which this variable turns off) would read as a problem.
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[*SPECIAL_TOKENS, *extra_special],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(CORPUS, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token=EOS,
        pad_token=PAD,
        bos_token=None,
        additional_special_tokens=list(extra_special),
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def readable_bias(
    tokenizer, penalty: float = -30.0, specials: int = len(SPECIAL_TOKENS)
) -> np.ndarray:
    """A logit bias of 0 for tokens that decode to printable ASCII and ``penalty`` for the rest
    (the first ``specials`` tokens included), so that random weights pick readable words (and
    never the end-of-sequence token)."""
    bias = np.full(len(tokenizer), penalty, dtype=np.float32)
    for token in range(specials, len(tokenizer)):
        text = tokenizer.decode([token])
        if text and text.isascii() and text.isprintable():
            bias[token] = 0.0
    return bias


def scripted_logits(tokenizer, script: str) -> np.ndarray:
    """A [vocab, vocab] table: row t is a one-hot of the token that follows t in ``script`` (the
    end-of-sequence token after its last one), and of its first token for any t not in it. Added
    to the logits at each position (large), it makes greedy and sampled output equal the script,
    whatever the prompt (as long as the prompt does not end inside it)."""
    ids = tokenizer.encode(script, add_special_tokens=False)
    if len(set(ids)) != len(ids):
        raise SystemExit(f"--script must not repeat a token; {script!r} is {ids}")
    vocab = len(tokenizer)
    follower = np.full(vocab, ids[0])
    follower[ids] = [*ids[1:], tokenizer.convert_tokens_to_ids(EOS)]
    table = np.zeros((vocab, vocab), dtype=np.float32)
    table[np.arange(vocab), follower] = 1000.0
    return table


def positional_logits(tokenizer, script: str, start: int) -> np.ndarray:
    """A [positions, vocab] table: the logits at position ``start - 1 + i`` (which pick the
    token at ``start + i``) favour the script's i-th token, then the end-of-sequence token.
    Any token may repeat, but the answer is the script only for prompts of ``start`` tokens."""
    ids = tokenizer.encode(script, add_special_tokens=False)
    ids.append(tokenizer.convert_tokens_to_ids(EOS))
    if start < 1 or start + len(ids) > MAX_POSITIONS:
        raise SystemExit(f"--script-at must leave the script inside {MAX_POSITIONS} positions")
    table = np.zeros((MAX_POSITIONS, len(tokenizer)), dtype=np.float32)
    table[np.arange(start - 1, start - 1 + len(ids)), ids] = 1000.0
    return table


def named(node, name: str):
    """``node`` with its output tensor and friendly name set to ``name``."""
    node.output(0).get_tensor().set_names({name})
    node.set_friendly_name(name)
    return node


def build_model(
    vocab: int,
    hidden: int,
    heads: int,
    layers: int,
    bias: np.ndarray,
    table: np.ndarray | None,
    by_position: bool = False,
    inputs_embeds: bool = False,
) -> ov.Model:
    """The decoder; with ``inputs_embeds`` it takes ``[B, T, hidden]`` embeddings instead of
    token ids (a vision-language model's language part, fed by its embedding models)."""
    if inputs_embeds and table is not None and not by_position:
        raise ValueError("a table keyed by the current token needs input_ids, not inputs_embeds")
    rng = np.random.default_rng(0)
    head_dim = hidden // heads

    def weight(*shape):
        scale = 1.0 / np.sqrt(shape[0])
        return ops.constant((rng.standard_normal(shape) * scale).astype(np.float32))

    if inputs_embeds:
        first = named(ops.parameter([-1, -1, hidden], ov.Type.f32), "inputs_embeds")
    else:
        first = input_ids = named(ops.parameter([-1, -1], ov.Type.i64), "input_ids")
    attention_mask = named(ops.parameter([-1, -1], ov.Type.i64), "attention_mask")
    position_ids = named(ops.parameter([-1, -1], ov.Type.i64), "position_ids")
    beam_idx = named(ops.parameter([-1], ov.Type.i32), "beam_idx")

    x = first if inputs_embeds else ops.gather(weight(vocab, hidden), input_ids, 0)
    x = ops.add(x, ops.gather(weight(MAX_POSITIONS, hidden), position_ids, 0))

    ids_shape = ops.shape_of(first)
    batch = ops.gather(ids_shape, ops.constant([0]), 0)
    empty_cache = ops.concat([batch, ops.constant([heads, 0, head_dim], dtype=np.int64)], 0)

    # Causal mask over past + current tokens, with attention_mask's padding: [B, 1, T, S].
    total = ops.gather(ops.shape_of(attention_mask), ops.constant(1), 0)
    current = ops.gather(ids_shape, ops.constant(1), 0)
    rows = ops.add(ops.range(0, current, 1, output_type="i64"), ops.subtract(total, current))
    cols = ops.range(0, total, 1, output_type="i64")
    causal = ops.greater_equal(ops.unsqueeze(rows, 1), ops.unsqueeze(cols, 0))
    unpadded = ops.not_equal(ops.unsqueeze(attention_mask, [1, 2]), ops.constant(0, np.int64))
    allowed = ops.logical_and(ops.unsqueeze(causal, [0, 1]), unpadded)
    mask = ops.select(allowed, ops.constant(0.0, np.float32), ops.constant(-1e9, np.float32))

    def split_heads(t):
        t = ops.reshape(t, ops.constant([0, 0, heads, head_dim]), special_zero=True)
        return ops.transpose(t, ops.constant([0, 2, 1, 3]))

    sinks = []
    for layer in range(layers):
        query = split_heads(ops.matmul(x, weight(hidden, hidden), False, False))
        cache = {}
        for kind in ("key", "value"):
            fresh = split_heads(ops.matmul(x, weight(hidden, hidden), False, False))
            info = VariableInfo()
            info.data_shape = ov.PartialShape([-1, heads, -1, head_dim])
            info.data_type = ov.Type.f32
            info.variable_id = f"past_key_values.{layer}.{kind}present.{layer}.{kind}"
            variable = Variable(info)
            past = ops.read_value(
                ops.broadcast(ops.constant(0.0, np.float32), empty_cache), variable
            )
            full = ops.concat([ops.gather(past, beam_idx, 0), fresh], 2)
            sinks.append(ops.assign(full, variable))
            cache[kind] = full
        attention = ops.scaled_dot_product_attention(
            query, cache["key"], cache["value"], mask, causal=False
        )
        attention = ops.reshape(
            ops.transpose(attention, ops.constant([0, 2, 1, 3])),
            ops.constant([0, 0, hidden]),
            special_zero=True,
        )
        x = ops.add(x, ops.matmul(attention, weight(hidden, hidden), False, False))
        hidden_mlp = ops.relu(ops.matmul(x, weight(hidden, 4 * hidden), False, False))
        x = ops.add(x, ops.matmul(hidden_mlp, weight(4 * hidden, hidden), False, False))

    logits = ops.add(ops.matmul(x, weight(hidden, vocab), False, False), ops.constant(bias))
    if table is not None:
        # Rows by the current token (scripted_logits) or by position (positional_logits).
        key = position_ids if by_position else input_ids
        logits = ops.add(logits, ops.gather(ops.constant(table), key, 0))
    result = named(ops.result(logits), "logits")
    result.input_value(0).get_tensor().set_names({"logits"})
    return ov.Model([result], sinks, [first, attention_mask, position_ids, beam_idx], "llm")


def write_llm_folder(
    out: Path,
    *,
    script: str | None = None,
    script_at: int | None = None,
    vocab: int = 512,
    hidden: int = 64,
    heads: int = 4,
    layers: int = 2,
) -> Path:
    """Write the folder (see the module's docstring) and return ``out``."""
    from openvino_tokenizers import convert_tokenizer

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(vocab)
    tokenizer.save_pretrained(out)
    (out / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    ov_tokenizer, ov_detokenizer = convert_tokenizer(tokenizer, with_detokenizer=True)
    ov.save_model(ov_tokenizer, out / "openvino_tokenizer.xml")
    ov.save_model(ov_detokenizer, out / "openvino_detokenizer.xml")

    bias = readable_bias(tokenizer)
    table = None
    if script is not None and script_at is not None:
        table = positional_logits(tokenizer, script, script_at)
    elif script is not None:
        table = scripted_logits(tokenizer, script)
    by_position = script_at is not None
    model = build_model(len(tokenizer), hidden, heads, layers, bias, table, by_position)
    ov.save_model(model, out / "openvino_model.xml", compress_to_fp16=False)

    eos = tokenizer.convert_tokens_to_ids(EOS)
    pad = tokenizer.convert_tokens_to_ids(PAD)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": len(tokenizer),
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "max_position_embeddings": MAX_POSITIONS,
        "eos_token_id": eos,
        "pad_token_id": pad,
    }
    (out / "config.json").write_text(json.dumps(config, indent=2))
    generation = {"eos_token_id": eos, "pad_token_id": pad}
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--script", help="the fixed answer (default: random readable words)")
    parser.add_argument(
        "--script-at", type=int, help="prompt length in tokens: the script may repeat tokens"
    )
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    out = write_llm_folder(
        args.out,
        script=args.script,
        script_at=args.script_at,
        vocab=args.vocab,
        hidden=args.hidden,
        heads=args.heads,
        layers=args.layers,
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
