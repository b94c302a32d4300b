"""Answers of the encoder servables (embeddings, rerank) on ``/v3``: the request checked, the
servable awaited, the body in OpenAI's (or Cohere's) shape. OVMS reads the body whatever the
path, so any ``/v3`` POST naming such a graph is taken as that graph's request, except
``/v3/tokenize``, which tokenizes with the graph's tokenizer. A request OVMS refuses is worded
as its graph reports a calculator failure (v3_errors.execution_error)."""

from __future__ import annotations

import asyncio
import base64

import numpy as np
import orjson

from ovmsx.genai.encoders.embeddings_request import (
    BASE64,
    EmbeddingsRequest,
    EmbeddingsRequestError,
    parse_embeddings_request,
)
from ovmsx.genai.encoders.embeddings_servable import Embedded
from ovmsx.genai.encoders.rerank_request import (
    RerankRequest,
    RerankRequestError,
    parse_rerank_request,
)
from ovmsx.genai.encoders.rerank_servable import RerankInputError, RerankServable
from ovmsx.genai.genai_errors import genai_message
from ovmsx.genai.openai.openai_request import RequestError
from ovmsx.genai.openai.tokenize_request import parse_tokenize, tokens_answer
from ovmsx.genai.openai.v3_errors import V3Error, execution_error
from ovmsx.status import StatusCode, render


async def encoder_answer(node, document: dict) -> bytes:
    servable = _servable(node, document)
    name = node.node.name
    try:
        if isinstance(servable, RerankServable):
            rerank = parse_rerank_request(document)
            return rerank_body(rerank, await servable.rerank(rerank))
        request = parse_embeddings_request(document)
        return embeddings_body(request, await servable.embed(request), document["model"])
    except (EmbeddingsRequestError, RerankRequestError) as error:
        raise execution_error(name, str(error)) from None
    except (RerankInputError, RuntimeError) as error:  # RuntimeError: OpenVINO's
        raise execution_error(name, str(error), "INTERNAL") from None


async def encoder_tokenize(node, document: dict) -> bytes:
    """``POST /v3/tokenize`` naming an encoder graph: its own tokenizer's ids, as OVMS
    tokenizes with the graph's tokenizer; padding without ``max_length`` pads to the
    servable's length. Off the event loop: a padded batch can take a while."""
    servable = _servable(node, document)
    name = node.node.name
    try:
        request = parse_tokenize(document, servable.max_length)
    except RequestError as error:
        raise execution_error(name, str(error)) from None
    try:
        rows = await asyncio.to_thread(servable.tokenizer.tokenize, request)
    except RuntimeError as error:
        raise execution_error(name, genai_message(error)) from None
    return orjson.dumps(tokens_answer(request, rows))


def _servable(node, document: dict):
    if node.servable is None:
        raise V3Error(
            500, render(StatusCode.MEDIAPIPE_DEFINITION_NOT_LOADED_YET, document["model"])
        )
    return node.servable


def embeddings_body(request: EmbeddingsRequest, embedded: Embedded, model: str) -> bytes:
    """OVMS's fields, plus ``model`` (OpenAI's; OVMS sends none). Vectors are float32, written
    as the shortest decimals that read back to the same float32 values."""
    vectors = embedded.vectors.astype(np.float32, copy=False)
    if request.encoding_format == BASE64:
        little = vectors.astype("<f4", copy=False)
        encoded = [base64.b64encode(row.tobytes()).decode("ascii") for row in little]
    else:
        encoded = list(vectors)
    data = [
        {"object": "embedding", "embedding": vector, "index": index}
        for index, vector in enumerate(encoded)
    ]
    usage = {"prompt_tokens": embedded.prompt_tokens, "total_tokens": embedded.prompt_tokens}
    body = {"object": "list", "data": data, "model": model, "usage": usage}
    return orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY)


def rerank_body(request: RerankRequest, scores: np.ndarray) -> bytes:
    """OVMS's shape: results by score, best first, cut to ``top_n``; each document as sent when
    ``return_documents`` asks (a string as ``{"text": ...}``)."""
    order = sorted(range(len(scores)), key=lambda index: -float(scores[index]))
    results = []
    for index in order[: request.top_n]:
        result: dict = {"index": index, "relevance_score": float(scores[index])}
        if request.return_documents:
            sent = request.documents[index]
            result["document"] = {"text": sent} if isinstance(sent, str) else sent
        results.append(result)
    return orjson.dumps({"results": results})
