"""A ``/v3/embeddings`` request body, checked as OVMS checks it (COMPAT_GENAI §6), with its
messages: ``input`` is a string, a list of strings, a list of token ids (one document), or a
list of such lists; ``encoding_format`` is ``float`` (the default) or ``base64``. ``dimensions``
and ``user`` are accepted and ignored, as OVMS ignores them.
"""

from __future__ import annotations

from dataclasses import dataclass

FLOAT = "float"
BASE64 = "base64"


class EmbeddingsRequestError(ValueError):
    """A request OVMS refuses, with its message."""


@dataclass(frozen=True)
class EmbeddingsRequest:
    texts: list[str] | None
    """The documents as text, or None when they came as token ids."""
    token_ids: list[list[int]] | None
    encoding_format: str

    @property
    def count(self) -> int:
        return len(self.texts if self.texts is not None else self.token_ids or ())


def parse_embeddings_request(document: dict) -> EmbeddingsRequest:
    if "input" not in document:
        raise EmbeddingsRequestError("input field is required")
    texts, token_ids = _input(document["input"])
    return EmbeddingsRequest(texts, token_ids, _encoding_format(document))


def _input(value) -> tuple[list[str] | None, list[list[int]] | None]:
    if isinstance(value, str):
        return [value], None
    if not isinstance(value, list):
        raise EmbeddingsRequestError(
            "input should be string, array of strings or array of integers"
        )
    if not value:
        raise EmbeddingsRequestError("input array should not be empty")
    # OVMS reads the array element by element: the first element fixes the kind, and the
    # first element that breaks it decides the message, so [1.5, ["a"]] is "every element..."
    # while [[1], 1.5] is "homogeneous".
    kind = None
    for item in value:
        if isinstance(item, list):
            item_kind = list
        elif isinstance(item, str):
            item_kind = str
        elif _is_int(item):
            item_kind = int
        else:
            raise EmbeddingsRequestError(
                "every element in input array should be either string or int"
            )
        if kind is not None and item_kind is not kind:
            raise EmbeddingsRequestError("input must be homogeneous")
        kind = item_kind
        if item_kind is list:
            _check_token_list(item)
    if kind is str:
        return list(value), None
    if kind is int:
        return None, [list(value)]
    return None, [list(item) for item in value]


def _check_token_list(item: list) -> None:
    if not item:
        raise EmbeddingsRequestError("inner arrays in input should not be empty")
    for token in item:
        if isinstance(token, str):
            raise EmbeddingsRequestError(
                "input must be either array of strings or array of array of integers"
            )
        if not _is_int(token):
            raise EmbeddingsRequestError("input must be homogeneous")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _encoding_format(document: dict) -> str:
    value = document.get("encoding_format", FLOAT)
    if value is None:
        return FLOAT
    if not isinstance(value, str):
        raise EmbeddingsRequestError("encoding_format should be string")
    if value not in (FLOAT, BASE64):
        raise EmbeddingsRequestError("encoding_format should either base64 or float")
    return value
