"""Finding tags in streamed text without ever releasing a tag's first characters early.

A handler may only act on text that no later text can reinterpret: up to the first tag, or, when
no tag is there yet, up to the point where the end of the buffer could still grow into one.
Deciding only on such text is what makes the result the same for every split of the output.
"""

from __future__ import annotations

from collections.abc import Sequence

WHITESPACE = " \t\r\n"


def find_tag(buf: str, tags: Sequence[str], final: bool) -> tuple[int, str | None]:
    """``(i, tag)`` when ``tag`` starts at ``i`` and no other tag could start before it;
    otherwise ``(i, None)``, with ``buf[:i]`` the text that cannot be part of any tag (all of
    it when ``final``: no more text is coming to complete one)."""
    at, found = -1, None
    for tag in tags:
        i = buf.find(tag)
        if i != -1 and (at == -1 or i < at or (i == at and len(tag) > len(found))):
            at, found = i, tag
    limit = len(buf) if found is None else at
    if not final:
        partial = _partial_start(buf, tags, limit)
        if partial is not None:
            return partial, None
    return limit, found


def _partial_start(buf: str, tags: Sequence[str], limit: int) -> int | None:
    """The first index before ``limit`` from which the rest of ``buf`` is an unfinished tag."""
    longest = max((len(tag) for tag in tags), default=0)
    for i in range(max(0, len(buf) - longest + 1), limit):
        rest = buf[i:]
        if any(len(rest) < len(tag) and tag.startswith(rest) for tag in tags):
            return i
    return None


def prefix_state(buf: str, words: Sequence[str]) -> str | None:
    """The word ``buf`` starts with, "" when ``buf`` is still the start of one, else None."""
    for word in words:
        if buf.startswith(word):
            return word
    if any(word.startswith(buf) for word in words):
        return ""
    return None


def leading_whitespace(buf: str) -> int:
    return len(buf) - len(buf.lstrip(WHITESPACE))
