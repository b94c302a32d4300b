"""How an error message quotes what the client sent: names, datatypes, versions and shapes.

A client controls the length of everything it sends, and an error that repeats it without a
limit can outgrow the client's limit on trailing metadata (grpc's default is 8 or 16 KiB): the
client then sees RESOURCE_EXHAUSTED instead of the error. So every message built from client
input quotes it through these functions: at most ``MAX_CHARACTERS`` of a text and the first
``MAX_DIMS`` dimensions of a shape, then ``...`` and how long the whole was. Quotes that fit are
unchanged, so ordinary messages read exactly as OVMS's.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_CHARACTERS = 256
"""Characters of one client text (a name, a datatype, a version) an error repeats."""

MAX_DIMS = 16
"""Dimensions of a client's shape an error repeats; real models stay far below."""


def quote(text: str) -> str:
    """``text`` itself, or its first ``MAX_CHARACTERS`` and ``"... (N characters)"``."""
    if len(text) <= MAX_CHARACTERS:
        return text
    return f"{text[:MAX_CHARACTERS]}... ({len(text)} characters)"


def quote_shape(shape: Sequence[int]) -> str:
    """``(1,224,224,3)`` as OVMS writes shapes; beyond ``MAX_DIMS`` dimensions, the first ones
    and the rank: ``(1,1,...,1,...) (rank 10000)``."""
    shown = ",".join(str(dim) for dim in shape[:MAX_DIMS])
    if len(shape) <= MAX_DIMS:
        return f"({shown})"
    return f"({shown},...) (rank {len(shape)})"
