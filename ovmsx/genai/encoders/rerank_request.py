"""A ``/v3/rerank`` request body (Cohere's form), checked as OVMS checks it, in its order and
with its messages (COMPAT_GENAI §7): ``query``, ``documents`` (all strings, or all
``{"title", "text"}`` objects), and the optional ``top_n``, ``rank_fields``,
``return_documents`` and ``max_chunks_per_doc`` (the last two accepted and ignored, as OVMS
ignores ``rank_fields`` and ``max_chunks_per_doc``).

Where OVMS parses object documents but scores none of them, ovmsx scores their ``text`` and
returns them whole with ``return_documents`` (docs/genai.md).
"""

from __future__ import annotations

from dataclasses import dataclass


class RerankRequestError(ValueError):
    """A request OVMS refuses, with its message."""


@dataclass(frozen=True)
class RerankRequest:
    query: str
    texts: list[str]
    """What each document scores by: the string, or an object's ``text``."""
    documents: list
    """The documents as sent (strings or objects), for ``return_documents``."""
    top_n: int
    return_documents: bool


def parse_rerank_request(document: dict) -> RerankRequest:
    if "model" in document and not isinstance(document["model"], str):
        raise RerankRequestError("model accepts string values")
    if "query" not in document:
        raise RerankRequestError("query field is missing in request")
    query = document["query"]
    if not isinstance(query, str):
        raise RerankRequestError("query is not a string")
    if "documents" not in document:
        raise RerankRequestError("documents field is missing in request")
    documents = document["documents"]
    if not isinstance(documents, list):
        raise RerankRequestError("documents is not an array")
    texts = [_text(item, documents[0]) for item in documents]
    top_n = document.get("top_n")
    if top_n is None:
        top_n = len(documents)
    elif not _is_int(top_n):
        raise RerankRequestError("top_n accepts integer values")
    elif top_n < 0:
        raise RerankRequestError("top_n must not be negative")
    _check_rank_fields(document.get("rank_fields"))
    return_documents = document.get("return_documents")
    if return_documents is not None and not isinstance(return_documents, bool):
        raise RerankRequestError("return_documents accepts boolean values")
    chunks = document.get("max_chunks_per_doc")
    if chunks is not None and not _is_int(chunks):
        raise RerankRequestError("max_chunks_per_doc accepts integer values")
    return RerankRequest(query, texts, documents, top_n, bool(return_documents))


def _text(item, first) -> str:
    if not isinstance(item, str | dict):
        raise RerankRequestError("documents array element is neither string nor object")
    if isinstance(item, str) != isinstance(first, str):
        raise RerankRequestError("all documents have to be the same type (string or objects)")
    if isinstance(item, str):
        return item
    if "title" not in item:
        raise RerankRequestError("document title field is missing")
    if not isinstance(item["title"], str):
        raise RerankRequestError("document title field have to be string")
    if "text" not in item:
        raise RerankRequestError("document text field is missing")
    if not isinstance(item["text"], str):
        raise RerankRequestError("document text field have to be string")
    return item["text"]


def _check_rank_fields(value) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise RerankRequestError("rank_fields is not an array")
    if not all(isinstance(field, str) for field in value):
        raise RerankRequestError("rank_fields array element is not a string")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
