"""Streamed text for byte-level BPE tokenizers without calling the detokenizer model.

openvino-genai's ``decode`` runs the detokenizer model: ~200 µs a call however few tokens it
gets, which is most of what an engine step costs for a small model. Byte-level BPE tokenizers
(GPT-2's scheme, used by Llama 3, Qwen, Mistral's newer models...) spell every token as bytes
mapped onto printable characters, so a token's bytes can be read off its vocabulary entry once
at load: streaming a token is then appending its bytes to the sequence's and decoding the UTF-8
that is complete (Python's incremental decoder holds back a character split across tokens).
(openvino-genai's ``get_vocab`` gives the bytes themselves; a vocabulary of stand-in characters
is mapped back through GPT-2's byte alphabet.)

Used only when it gives the detokenizer's own text: ``ByteLevelText.of`` builds the table and
checks it against ``decode`` on sample sequences, and returns None for any other tokenizer
(SentencePiece, WordPiece, ...), which then keeps the detokenizer model.
"""

from __future__ import annotations

import codecs
import random

SAMPLES = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "Ça va? Grüße aus Köln — 東京 🙂 naïve café, 1234567890.",
    "def f(x):\n    return {'a': [1, 2, 3]}  # code\n\ttabs and  double  spaces",
]


def _complete(data: bytes | None) -> bool:
    if not data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _byte_alphabet() -> dict[str, int]:
    """GPT-2's map from the printable stand-in characters back to bytes."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    table = {chr(b): b for b in printable}
    shift = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + shift)] = b
            shift += 1
    return table


class ByteLevelText:
    """Each token's bytes; special tokens (dropped by ``skip_special_tokens``) have none."""

    def __init__(self, token_bytes: list[bytes | None]) -> None:
        self._bytes = token_bytes

    @classmethod
    def of(cls, tokenizer, samples: int = 64) -> ByteLevelText | None:
        """The table for ``tokenizer`` (openvino-genai's), or None when it is not byte-level
        BPE or the table does not give ``decode``'s text on the samples."""
        vocab = tokenizer.get_vocab()
        if not vocab:
            return None
        size = max(vocab.values()) + 1
        alphabet = _byte_alphabet()
        # A special token decodes to "" alone when skipped and to its text when kept. A token
        # holding part of a UTF-8 character decodes to "" alone either way (some detokenizers
        # drop the incomplete bytes): it is not special, its bytes count.
        ids = [[i] for i in range(size)]
        skipped = tokenizer.decode(ids, skip_special_tokens=True)
        kept = tokenizer.decode(ids, skip_special_tokens=False)
        table: list[bytes | None] = [None] * size
        for spelling, token in vocab.items():
            if token >= size or (not skipped[token] and kept[token]):
                continue  # special: no text when skipped
            if isinstance(spelling, bytes):  # openvino-genai gives a token's own bytes
                table[token] = spelling
                continue
            try:
                table[token] = bytes(alphabet[c] for c in spelling)
            except KeyError:
                return None  # a character outside the byte alphabet: not byte-level BPE
        spelled = cls(table)
        # Real text (several scripts), and random runs of tokens that are whole characters.
        batch = [list(row) for row in tokenizer.encode(SAMPLES).input_ids.data.tolist()]
        batch = [[t for t in row if t < size] for row in batch]
        whole = [t for t, spelled_bytes in enumerate(table) if _complete(spelled_bytes)]
        rng = random.Random(0)
        if whole:
            batch += [
                [rng.choice(whole) for _ in range(rng.randrange(1, 24))] for _ in range(samples)
            ]
        expected = tokenizer.decode(batch, skip_special_tokens=True)
        for tokens, text in zip(batch, expected, strict=True):
            if spelled.text(tokens) != text:
                return None
        return spelled

    def text(self, tokens: list[int]) -> str:
        """The whole text of ``tokens`` (incomplete characters replaced, as decode does)."""
        return b"".join(self._bytes[t] or b"" for t in tokens).decode("utf-8", errors="replace")

    def stream(self) -> StreamedText:
        return StreamedText(self._bytes)


class StreamedText:
    """One sequence's text as its tokens arrive."""

    __slots__ = ("_bytes", "_decoder")

    def __init__(self, token_bytes: list[bytes | None]) -> None:
        self._bytes = token_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, tokens: list[int], final: bool) -> str:
        """The new text ``tokens`` complete (everything left, when ``final``)."""
        table = self._bytes
        data = b"".join(table[t] or b"" for t in tokens)
        return self._decoder.decode(data, final)
