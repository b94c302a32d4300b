"""Streamed text from growing lists of token ids, never cutting a character in two.

A token may end in the middle of a UTF-8 character (byte-level tokenizers split "Ç" into two
tokens), and some tokenizers decode a token differently after others (a leading space), so each
sequence keeps two offsets into its ids: text is decoded from ``prefix`` (a little context) to
the end and compared with the text from ``prefix`` to ``read`` (what was already sent); the
difference goes out once it no longer ends in U+FFFD, the replacement character of an
incomplete one.

openvino-genai's ``decode`` is one inference of the detokenizer model, ~150 µs however short the
list, but a batch of 64 lists costs little more than one: the engine gathers every sequence that
moved in a step and decodes them together (``decode_steps``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

INCOMPLETE = "\ufffd"


class TextDecoder:
    """One generated sequence's ids and the part of their text already sent."""

    __slots__ = ("ids", "prefix", "read")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.prefix = 0
        self.read = 0

    def slices(self) -> tuple[list[int], list[int]]:
        """The ids to decode now: the text already sent, and that text plus what is new."""
        return self.ids[self.prefix : self.read], self.ids[self.prefix :]

    def advance(self, sent: str, whole: str, final: bool) -> str:
        """The new text, given the decoded ``slices``; "" while a character is incomplete
        (unless ``final``: then whatever is there goes out)."""
        if whole.endswith(INCOMPLETE) and not final:
            return ""
        # What follows the text already sent ("" if more tokens shortened it: move on rather
        # than stall).
        new = whole[len(sent) :]
        self.prefix = self.read
        self.read = len(self.ids)
        return new


def decode_steps(
    decode: Callable[[list[list[int]]], list[str]],
    moved: Sequence[tuple[TextDecoder, bool]],
) -> list[str]:
    """The new text of each ``(decoder, final)`` in ``moved``, with one ``decode`` call."""
    if not moved:
        return []
    batch: list[list[int]] = []
    for decoder, _ in moved:
        batch.extend(decoder.slices())
    texts = decode(batch)
    return [
        decoder.advance(texts[2 * i], texts[2 * i + 1], final)
        for i, (decoder, final) in enumerate(moved)
    ]
