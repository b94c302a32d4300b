"""Write a random-weight LLM as one GGUF file, in llama.cpp's ``llama`` layout, from nothing but
packages on the package index (``gguf``, ``tokenizers``, ``numpy``): no model hub, no torch.

OVMS's LLM graphs may name a ``.gguf`` file (or a folder holding one) as their ``models_path``;
openvino-genai then builds the model and its tokenizer from that single file. Tests need such a
file small enough to write and load in a second, and benchmarks need one large enough for the
pipeline's cost to show, so the sizes are parameters:

    python bench/llm_gguf.py /tmp/tiny.gguf --hidden 64 --layers 2 --heads 4 --vocab 512
    python bench/llm_gguf.py /tmp/mid.gguf --hidden 1024 --layers 16 --heads 16 --vocab 32000 \
        --tokenizer-dir /tmp/mid-tokenizer   # the tokenizer as a Hugging Face folder, too

What the file holds:

* the llama tensors (``token_embd``, per block ``attn_norm``, ``attn_q/k/v/output``,
  ``ffn_norm``, ``ffn_gate/up/down``, then ``output_norm`` and ``output``), matmul weights
  shaped ``[out, in]`` as numpy arrays (GGUF lists dimensions innermost first, and the writer
  reverses them), stored F16 (``--dtype f16``, the default), Q8_0 or Q4_0 (quantized by the
  ``gguf`` package), or F32; RMSNorm weights are ones, kept F32 whatever the type, as llama.cpp
  keeps 1-D tensors;
* the ``llama.*`` hyper-parameters, ``general.architecture/name/file_type``;
* a byte-level BPE tokenizer (``tokenizer.ggml.model`` "gpt2", pre-tokenizer "llama-bpe"),
  trained here with ``tokenizers`` on a few sentences and seeded pseudo-words so that it
  reaches the vocabulary size asked for, with ``<|endoftext|>`` (padding), ``<|im_start|>``
  and ``<|im_end|>`` (end of sequence) as control tokens and a ChatML chat template.

The weights are normal draws scaled by 1/sqrt(fan_in), so activations keep their size through
the layers and the logits differ enough from token to token for the text to vary. The text is
nonsense, but readable: one hidden channel is reserved as a constant (see ``BIAS_CHANNEL``)
that pushes every token which is not printable ASCII far down, so neither greedy nor sampled
decoding emits a control token, an end-of-sequence or a stray byte of a UTF-8 character. The
model therefore never stops on its own: generations run to their token limit, which is what a
benchmark wants and what makes a test's expected length exact.

The same arguments and seed give the same file, byte for byte.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ARCH = "llama"
PAD, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (PAD, IM_START, IM_END)
# ChatML, written without newlines between template tags so that renderers with and without
# trim_blocks (OVMS's jinja2 settings, openvino-genai's own renderer) give the same prompt.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
# openvino-genai picks its pre-tokenizer regex by tokenizer.ggml.pre; "llama-bpe" is Llama 3's
# split. The trainer below splits words with the same pattern, so every merge it learns can
# apply to the words openvino-genai's tokenizer sees.
PRE_TOKENIZER = "llama-bpe"
SPLIT_PATTERN = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Real words first (weighted so that they become whole tokens), so prompts in tests and
# examples tokenize into a few pieces rather than into bytes.
SENTENCES = (
    "The model server answers requests over gRPC and REST.",
    "What is the capital of France? Paris is the capital of France.",
    "Tell me a short story about a robot who learns to paint.",
    "Hello, how are you today? I am fine, thank you for asking.",
    "system user assistant question answer number 0123456789",
)
# Syllables for pseudo-words: a corpus of a few sentences yields a few hundred merges at most,
# and a 32000-token vocabulary needs tens of thousands of distinct words to merge.
ONSETS = ("", "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "st",
          "tr", "ch", "th", "br", "pl")  # fmt: skip
NUCLEI = ("a", "e", "i", "o", "u", "ai", "ou", "ea")
CODAS = ("", "", "n", "r", "s", "l", "t", "m")

# The reserved hidden channel. Every token's embedding holds CHANNEL_VALUE in it, and no layer
# writes into it (row BIAS_CHANNEL of attn_output and ffn_down is zero), so after the final
# RMSNorm it is a positive constant per position: column BIAS_CHANNEL of output.weight then
# acts as the logit bias that llama's architecture has no tensor for. Unreadable tokens get
# -PENALTY there; readable ones 0.
BIAS_CHANNEL = 0
CHANNEL_VALUE = 4.0
PENALTY = 64.0

# The matmul weights' storage, and the general.file_type llama.cpp names it by. openvino-genai
# 2026.4 builds F16, Q8_0 and Q4_0 weights; it refuses F32 ones ("Unsupported quantization
# type"), so "f32" writes a file llama.cpp reads and openvino-genai does not.
FILE_TYPES = {"f16": "MOSTLY_F16", "q8_0": "MOSTLY_Q8_0", "q4_0": "MOSTLY_Q4_0", "f32": "ALL_F32"}

ROPE_FREQ_BASE = 10000.0
RMS_EPS = 1e-5


def default_ffn(hidden: int) -> int:
    """llama's SwiGLU width: 8/3 of the hidden size, rounded up to a multiple of 64."""
    width = -(-8 * hidden // 3)  # ceiling division
    return -(-width // 64) * 64


def pseudo_words(count: int, rng: np.random.Generator) -> list[str]:
    words = []
    for _ in range(count):
        syllables = rng.integers(1, 4)
        parts = [
            ONSETS[rng.integers(len(ONSETS))]
            + NUCLEI[rng.integers(len(NUCLEI))]
            + CODAS[rng.integers(len(CODAS))]
            for _ in range(syllables)
        ]
        words.append("".join(parts))
    return words


def train_tokenizer(vocab: int, seed: int):
    """A byte-level BPE of exactly ``vocab`` tokens: the control tokens (ids 0-2), the 256 byte
    symbols, then merges. Returns the ``tokenizers.Tokenizer``."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    floor = len(SPECIAL_TOKENS) + 256
    if vocab < floor + 32:
        raise ValueError(f"vocab must be at least {floor + 32} (control tokens, bytes, merges)")
    rng = np.random.default_rng([seed, 1])
    # Zipf-like counts: frequent words merge first, and the rare tail still gives the trainer
    # enough distinct pairs to reach a large vocabulary.
    words = pseudo_words(2 * vocab, rng)
    lines = [" ".join([word] * (1 + 1000 // rank)) for rank, word in enumerate(words, 1)]
    lines = [sentence for sentence in SENTENCES for _ in range(200)] + lines

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(SPLIT_PATTERN), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(lines, trainer)
    if bpe.get_vocab_size() != vocab:
        raise ValueError(f"the BPE trainer stopped at {bpe.get_vocab_size()} tokens, not {vocab}")
    return bpe


def tokenizer_fields(bpe) -> tuple[list[str], list[int], list[str], np.ndarray]:
    """(tokens by id, GGUF token types, merges as "left right", readable mask) of ``bpe``."""
    from gguf import TokenType

    by_id = {index: token for token, index in bpe.get_vocab().items()}
    tokens = [by_id[index] for index in range(len(by_id))]
    types = [TokenType.CONTROL if token in SPECIAL_TOKENS else TokenType.NORMAL for token in tokens]
    # tokenizers >= 0.20 saves merges as pairs, older releases as "left right" strings.
    merges = json.loads(bpe.to_str())["model"]["merges"]
    merges = [merge if isinstance(merge, str) else " ".join(merge) for merge in merges]
    # decode() drops control tokens (""), and renders a lone byte of a multi-byte character
    # as U+FFFD: neither passes as readable.
    texts = bpe.decode_batch([[index] for index in range(len(tokens))])
    readable = np.array([bool(t) and t.isascii() and t.isprintable() for t in texts])
    return tokens, [int(kind) for kind in types], merges, readable


def save_tokenizer_folder(bpe, folder: Path, context: int) -> None:
    """``tokenizer.json`` and a ``tokenizer_config.json`` naming its special tokens and chat
    template: what ``transformers.AutoTokenizer`` loads without a model."""
    folder.mkdir(parents=True, exist_ok=True)
    bpe.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": IM_END,
        "pad_token": PAD,
        "model_max_length": context,
        "chat_template": CHAT_TEMPLATE,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=1))


class _Tensor:
    """One tensor of the plan: its name, numpy shape, GGML type, and how to draw its values."""

    def __init__(self, name: str, shape: tuple[int, ...], storage: str, make: Callable) -> None:
        self.name = name
        self.shape = shape
        self.storage = storage  # "f32", "f16", or a quantized type's name ("q8_0", "q4_0")
        self.make = make

    def info(self) -> tuple[tuple[int, ...], np.dtype, int, object]:
        """(shape, dtype, bytes, raw GGML type) as ``GGUFWriter.add_tensor_info`` takes them."""
        from gguf import GGMLQuantizationType
        from gguf.quants import quant_shape_to_byte_shape

        if self.storage in ("f32", "f16"):
            dtype = np.dtype(np.float32 if self.storage == "f32" else np.float16)
            return self.shape, dtype, int(np.prod(self.shape)) * dtype.itemsize, None
        # Quantized rows are written as bytes; the writer recovers the element shape.
        qtype = GGMLQuantizationType[self.storage.upper()]
        byte_shape = quant_shape_to_byte_shape(self.shape, qtype)
        return byte_shape, np.dtype(np.uint8), int(np.prod(byte_shape)), qtype

    def values(self) -> np.ndarray:
        from gguf import GGMLQuantizationType
        from gguf.quants import quantize

        values = self.make()
        if self.storage == "f32":
            return values.astype(np.float32)
        if self.storage == "f16":
            return values.astype(np.float16)
        return quantize(values, GGMLQuantizationType[self.storage.upper()])


def tensor_plan(
    *,
    hidden: int,
    layers: int,
    kv_dim: int,
    ffn: int,
    vocab: int,
    dtype: str,
    seed: int,
    readable: np.ndarray,
) -> list[_Tensor]:
    """Every tensor in file order, each drawn from its own seeded generator when written, so
    the writer never holds more than one tensor in memory (a mid-size model is 0.5 GB)."""
    plan: list[_Tensor] = []

    def add(name: str, shape: tuple[int, ...], role: str) -> None:
        index = len(plan)
        # 1-D tensors stay F32 in every file type, as llama.cpp writes them.
        storage = "f32" if role == "norm" else dtype

        def make() -> np.ndarray:
            if role == "norm":
                return np.ones(shape, np.float32)
            rng = np.random.default_rng([seed, 2, index])
            values = rng.standard_normal(shape, dtype=np.float32)
            if role == "embed":
                # Unscaled: each block's RMSNorm rescales its input anyway, and unit entries
                # keep the bias channel's share of the norm the same at every size.
                values[:, BIAS_CHANNEL] = CHANNEL_VALUE
            else:
                values *= 1.0 / np.sqrt(shape[1])  # [out, in]: fan_in is the last dimension
            if role == "residual":  # writes into the residual stream: keep the channel clean
                values[BIAS_CHANNEL, :] = 0.0
            if role == "output":
                values[:, BIAS_CHANNEL] = np.where(readable, 0.0, -PENALTY)
            return values

        plan.append(_Tensor(name, shape, storage, make))

    add("token_embd.weight", (vocab, hidden), "embed")
    for block in range(layers):
        prefix = f"blk.{block}."
        add(prefix + "attn_norm.weight", (hidden,), "norm")
        add(prefix + "attn_q.weight", (hidden, hidden), "matmul")
        add(prefix + "attn_k.weight", (kv_dim, hidden), "matmul")
        add(prefix + "attn_v.weight", (kv_dim, hidden), "matmul")
        add(prefix + "attn_output.weight", (hidden, hidden), "residual")
        add(prefix + "ffn_norm.weight", (hidden,), "norm")
        add(prefix + "ffn_gate.weight", (ffn, hidden), "matmul")
        add(prefix + "ffn_up.weight", (ffn, hidden), "matmul")
        add(prefix + "ffn_down.weight", (hidden, ffn), "residual")
    add("output_norm.weight", (hidden,), "norm")
    add("output.weight", (vocab, hidden), "output")
    return plan


def write_gguf(
    path: str | Path,
    *,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int | None = None,
    ffn: int | None = None,
    vocab: int = 512,
    dtype: str = "f16",
    seed: int = 0,
    context: int = 2048,
    tokenizer_dir: str | Path | None = None,
) -> Path:
    """Write the model to ``path`` (``kv_heads`` defaults to ``heads``, ``ffn`` to
    ``default_ffn(hidden)``) and return the path. With ``tokenizer_dir``, the same tokenizer is
    also saved there as a Hugging Face tokenizer folder, for load generators that build prompts
    of a given token count and cannot read a GGUF file."""
    from gguf import GGUFWriter, LlamaFileType

    if dtype not in FILE_TYPES:
        raise ValueError(f"dtype must be one of {', '.join(FILE_TYPES)}, not {dtype!r}")
    kv_heads = heads if kv_heads is None else kv_heads
    ffn = default_ffn(hidden) if ffn is None else ffn
    if hidden % heads or heads % kv_heads:
        raise ValueError("hidden must divide by heads, and heads by kv_heads")
    head_dim = hidden // heads
    if head_dim % 2:
        raise ValueError("rotary embeddings need an even head size (hidden / heads)")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    bpe = train_tokenizer(vocab, seed)
    if tokenizer_dir is not None:
        save_tokenizer_folder(bpe, Path(tokenizer_dir), context)
    tokens, types, merges, readable = tokenizer_fields(bpe)
    plan = tensor_plan(
        hidden=hidden,
        layers=layers,
        kv_dim=kv_heads * head_dim,
        ffn=ffn,
        vocab=vocab,
        dtype=dtype,
        seed=seed,
        readable=readable,
    )

    writer = GGUFWriter(path, ARCH)  # also writes general.architecture
    writer.add_name(f"random-llama-h{hidden}-l{layers}-v{vocab}-{dtype}")
    # openvino-genai reads general.file_type to choose between its F16 and quantized paths.
    writer.add_file_type(int(getattr(LlamaFileType, FILE_TYPES[dtype])))
    writer.add_context_length(context)
    writer.add_embedding_length(hidden)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(RMS_EPS)
    writer.add_rope_freq_base(ROPE_FREQ_BASE)
    writer.add_vocab_size(vocab)

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(PRE_TOKENIZER)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(tokens.index(PAD))
    writer.add_eos_token_id(tokens.index(IM_END))
    writer.add_pad_token_id(tokens.index(PAD))
    # ChatML models start prompts with no BOS (openvino-genai's GGUF tokenizer adds none
    # either way); saying so keeps llama.cpp from adding one to the same file.
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    # Tensor infos first, data after: the writer streams each tensor as it is drawn.
    for tensor in plan:
        shape, stored, nbytes, raw = tensor.info()
        writer.add_tensor_info(tensor.name, shape, stored, nbytes, raw_dtype=raw)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in plan:
        writer.write_tensor_data(tensor.values())
    writer.close()
    return path


def parameter_count(*, hidden, layers, heads, kv_heads=None, ffn=None, vocab) -> int:
    kv_dim = (heads if kv_heads is None else kv_heads) * (hidden // heads)
    ffn = default_ffn(hidden) if ffn is None else ffn
    block = 2 * hidden + 2 * hidden * hidden + 2 * kv_dim * hidden + 3 * ffn * hidden
    return 2 * vocab * hidden + hidden + layers * block


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the .gguf file to write")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv-heads", type=int, default=None, help="default: --heads")
    parser.add_argument("--ffn", type=int, default=None, help="default: 8/3 hidden, to 64")
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--dtype", choices=tuple(FILE_TYPES), default="f16")
    parser.add_argument("--context", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--tokenizer-dir", type=Path, help="also save the tokenizer there as a Hugging Face folder"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    path = write_gguf(
        args.out,
        hidden=args.hidden,
        layers=args.layers,
        heads=args.heads,
        kv_heads=args.kv_heads,
        ffn=args.ffn,
        vocab=args.vocab,
        dtype=args.dtype,
        seed=args.seed,
        context=args.context,
        tokenizer_dir=args.tokenizer_dir,
    )
    count = parameter_count(
        hidden=args.hidden,
        layers=args.layers,
        heads=args.heads,
        kv_heads=args.kv_heads,
        ffn=args.ffn,
        vocab=args.vocab,
    )
    size = path.stat().st_size / 1e6
    seconds = time.perf_counter() - started
    print(f"{path}: {count / 1e6:.1f} M parameters, {size:.1f} MB, written in {seconds:.1f} s")


if __name__ == "__main__":
    main()
