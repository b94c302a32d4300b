"""The OpenAI-compatible endpoints under ``/v3`` (and ``/v1``), routed as OVMS routes them
(COMPAT_GENAI §3).

- ``GET /v3/models``, ``/v3/v1/models``, ``/v1/models``: every available model, pipeline and
  graph; ``GET .../models/<name>``: one of them (an unknown name is OVMS's 500 "Model not
  found").
- ``POST`` to any other ``/v3/...`` or ``/v1/...`` path: the JSON ``model`` field names the
  graph; an LLM graph's node then picks the endpoint from the exact path
  (``/v3/chat/completions``, ``/v3/completions``, their ``/v1`` and ``/v3/v1`` forms).

Routing failures keep OVMS's codes: a body that is not JSON (or has no string ``model``) is
412 ``The file is not valid json - ...``; an unknown graph 404; a graph not loaded (yet) 500
``Mediapipe is not loaded yet``; with an API key set, a missing or wrong ``Authorization:
Bearer`` header is OVMS's 500 ``Unauthorized request ...``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import unquote

import orjson

from ovmsx import _core
from ovmsx.frontend.request_observer import RequestObserver
from ovmsx.genai.encoders.embeddings_node import EmbeddingsNode
from ovmsx.genai.encoders.encoder_answer import encoder_answer, encoder_tokenize
from ovmsx.genai.encoders.rerank_node import RerankNode
from ovmsx.genai.openai.generation_meter import GenerationMeter
from ovmsx.genai.openai.openai_request import CHAT, COMPLETIONS, RESPONSES
from ovmsx.genai.openai.refusal_log import RefusalLog
from ovmsx.genai.openai.v3_errors import RETRY_AFTER_S, V3Error, invalid_json, unavailable
from ovmsx.genai.text_generation.llm_node import LLMNode
from ovmsx.graph.calculator import CalculatorNode
from ovmsx.in_flight import InFlight
from ovmsx.metrics.families import REST, STREAM, UNARY
from ovmsx.servables.model_version import VersionState
from ovmsx.status import StatusCode, render

log = logging.getLogger("ovmsx.llm_calculator")

MAX_DEPTH = 100
SSE = "text/event-stream"
JSON = "application/json"
_MODELS = re.compile(r"(?:/v3/(?:v1/)?|/v1/)models")
_MODEL = re.compile(r"(?:/v3/(?:v1/)?|/v1/)models/(.+)")
_ENDPOINTS = {
    "/v3/chat/completions": CHAT,
    "/v3/v1/chat/completions": CHAT,
    "/v1/chat/completions": CHAT,
    "/v3/completions": COMPLETIONS,
    "/v3/v1/completions": COMPLETIONS,
    "/v1/completions": COMPLETIONS,
    "/v3/responses": RESPONSES,
    "/v3/v1/responses": RESPONSES,
    "/v1/responses": RESPONSES,
}
_WRONG_ENDPOINT = (
    "Wrong endpoint. Allowed endpoints: /v[13]/chat/completions, /v[13]/completions, "
    "/v[13]/responses, /v[13]/tokenize"
)
V3_NODES = (LLMNode, EmbeddingsNode, RerankNode)
# A graph still loading is waited for this long before the request is refused, as OVMS does.
NOT_LOADED_WAIT_S = 0.5
# A loaded graph whose engine restarts (2-4 s) is waited for this long, then answered 503.
RESTART_WAIT_S = 5.0
RESTART_POLL_S = 0.05


@dataclass
class V3Response:
    status: int
    body: bytes | AsyncIterator[bytes]
    content_type: str = JSON
    headers: tuple[tuple[str, str], ...] = ()
    """More headers of a whole answer (``Retry-After`` of a 503)."""


def is_v3_path(path: str) -> bool:
    """Paths this module answers (the config API's /v1/config paths stay with KServe's)."""
    path = path.partition("?")[0]
    if path.startswith("/v3/"):
        return True
    return path.startswith("/v1/") and not path.startswith("/v1/config")


def error_response(error: V3Error) -> V3Response:
    return V3Response(error.status, orjson.dumps({"error": error.message}), headers=error.headers)


class V3App:
    def __init__(
        self, registry, api_key: str = "", observer: RequestObserver | None = None
    ) -> None:
        self._registry = registry
        self._api_key = api_key
        self._observer = observer
        self._refusals = RefusalLog()

    async def handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> V3Response:
        path = path.partition("?")[0]
        try:
            if method == "GET":
                return self._models(path)
            if method != "POST":
                raise V3Error(406, render(StatusCode.REST_UNSUPPORTED_METHOD))
            return await self._generate(path, headers, body)
        except V3Error as error:
            self._refusals.refused(error.status, method, path, error.message)
            return error_response(error)

    # -- models ----------------------------------------------------------------------------

    def _models(self, path: str) -> V3Response:
        if _MODELS.fullmatch(path):
            created = int(time.time())
            names = self._listed()
            data = [_model(name, created) for name in names]
            return V3Response(200, orjson.dumps({"data": data, "object": "list"}))
        found = _MODEL.fullmatch(path)
        if found:
            name = unquote(found.group(1))
            if name in self._listed(all_graphs=True):
                return V3Response(200, orjson.dumps(_model(name, int(time.time()))))
            raise V3Error(500, "Model not found")
        raise V3Error(406, render(StatusCode.REST_UNSUPPORTED_METHOD))

    def _listed(self, all_graphs: bool = False) -> list[str]:
        registry = self._registry
        names = [name for name, model in registry.models.items() if _available(model)]
        names += [name for name, pipeline in registry.pipelines.items() if pipeline.available]
        names += [name for name, graph in registry.graphs.items() if all_graphs or graph.available]
        return names

    # -- generation ------------------------------------------------------------------------

    async def _generate(self, path: str, headers: dict[str, str], body: bytes) -> V3Response:
        if self._api_key and headers.get("authorization") != f"Bearer {self._api_key}":
            raise V3Error(500, render(StatusCode.UNAUTHORIZED))
        content_type = headers.get("content-type", "")
        if "application/json" in content_type:
            document = _parse(body, path)
        else:
            document = self._named_by_path(path, body)
        name = document["model"]
        node, in_flight = await self._v3_node(name)
        # Held until the answer is complete: a reload retires the graph (and stops its engine)
        # only once the requests on it have ended.
        in_flight.enter()
        llm = isinstance(node, LLMNode)
        meter = self._meter(name, llm and document.get("stream") is True, in_flight.leave, llm)
        meter.accepted()
        try:
            if llm:
                response = await self._answer(path, document, node, meter)
            elif path.endswith("tokenize"):  # as OVMS matches it
                response = V3Response(200, await encoder_tokenize(node, document))
            else:
                response = V3Response(200, await encoder_answer(node, document))
        except BaseException:
            meter.end(False)
            raise
        if isinstance(response.body, bytes):
            meter.responded()
            meter.end(True)
        # A stream counts its chunks and ends the call itself (llm_servable.AnswerStream).
        return response

    def _named_by_path(self, path: str, body: bytes) -> dict:
        """Without a JSON Content-Type OVMS takes the graph's name from the path, after its
        first four characters (``/v3/NAME``); the body is then read as JSON all the same."""
        name = path[4:]
        if name not in self._registry.graphs:
            raise V3Error(
                404,
                "Mediapipe graph definition with requested name is not found - requests to "
                "/v3 need Content-Type: application/json",
            )
        document = _parse(body, path, need_model=False)
        document["model"] = name  # the graph it is routed to
        return document

    def _meter(self, name: str, stream: bool, release, llm: bool) -> GenerationMeter:
        observer = self._observer
        call = observer.graph_call(REST, STREAM if stream else UNARY, name) if observer else None
        metrics = getattr(self._registry, "metrics", None)
        series = metrics.llm_series(name) if metrics is not None and llm else None
        return GenerationMeter(call, series, release)

    async def _answer(
        self, path: str, document: dict, node: LLMNode, meter: GenerationMeter
    ) -> V3Response:
        name = document["model"]
        endpoint = _ENDPOINTS.get(path)
        if endpoint is None and not path.endswith("tokenize"):
            raise V3Error(400, _WRONG_ENDPOINT)
        if path.startswith("/v3/v1/"):
            log.warning("%s is deprecated; use %s", path, path.replace("/v3/v1/", "/v3/", 1))
        servable = node.servable
        if servable is None:
            raise V3Error(500, render(StatusCode.MEDIAPIPE_DEFINITION_NOT_LOADED_YET, name))
        if endpoint is None:  # ends with "tokenize", as OVMS matches it
            return V3Response(200, await servable.tokenize(document, node.node.name))
        metrics = getattr(self._registry, "metrics", None)
        if metrics is not None:
            metrics.llm_series(name).engine = servable.engine
        answer = await servable.answer(endpoint, document, node.node.name, meter)
        if isinstance(answer, bytes):
            return V3Response(200, answer)
        return V3Response(200, answer, SSE)

    async def _v3_node(self, name: str) -> tuple[CalculatorNode, InFlight]:
        graph = self._registry.graphs.get(name)
        if graph is None:
            raise V3Error(404, render(StatusCode.MEDIAPIPE_DEFINITION_NAME_MISSING))
        if graph.state is VersionState.AVAILABLE and not graph.available:
            graph = await self._restarted(name)
        if not graph.available:
            await asyncio.sleep(NOT_LOADED_WAIT_S)
            graph = self._registry.graphs.get(name)
            if graph is None:
                raise V3Error(404, render(StatusCode.MEDIAPIPE_DEFINITION_NAME_MISSING))
            if graph.state in (VersionState.UNLOADING, VersionState.END):
                raise V3Error(404, render(StatusCode.MEDIAPIPE_DEFINITION_NOT_LOADED_ANYMORE))
            if not graph.available:
                reason = f"{name}: {graph.error.message}" if graph.error is not None else name
                raise V3Error(500, render(StatusCode.MEDIAPIPE_DEFINITION_NOT_LOADED_YET, reason))
        for node in graph.nodes:
            if isinstance(node, V3_NODES) and graph.plan is not None:
                return node, graph.plan.in_flight
        raise V3Error(
            412,
            f"graph {name} does not serve the OpenAI-compatible API (it has no "
            "HttpLLMCalculator, EmbeddingsCalculatorOV or RerankCalculatorOV node)",
        )

    async def _restarted(self, name: str):
        """A loaded graph whose engine is restarting (it died or wedged): wait a bounded time
        for it to come back; still down, that is a 503 with ``Retry-After``, not OVMS's 500
        for a graph that never loaded."""
        deadline = time.monotonic() + RESTART_WAIT_S
        while True:
            await asyncio.sleep(RESTART_POLL_S)
            graph = self._registry.graphs.get(name)
            if graph is None:
                raise V3Error(404, render(StatusCode.MEDIAPIPE_DEFINITION_NAME_MISSING))
            if graph.state is not VersionState.AVAILABLE or graph.available:
                return graph
            if time.monotonic() > deadline:
                raise unavailable(
                    f"{name} is restarting its engine; retry in {RETRY_AFTER_S} s", RETRY_AFTER_S
                )


def _parse(body: bytes, path: str, need_model: bool = True) -> dict:
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise invalid_json("Cannot parse JSON body") from None
    if _core.json_depth_exceeded_at(body, MAX_DEPTH) >= 0:
        raise V3Error(500, render(StatusCode.JSON_NESTING_DEPTH_EXCEEDED))
    if not isinstance(document, dict):
        raise invalid_json("JSON body must be an object")
    if "model" not in document and need_model:
        raise invalid_json("model field is missing in JSON body")
    if "model" in document and not isinstance(document["model"], str):
        raise invalid_json("model field is not a string")
    # Checked only where a stream is possible, as OVMS does.
    streamable = "completions" in path or "responses" in path
    stream = document.get("stream")
    if streamable and stream is not None and not isinstance(stream, bool):
        raise invalid_json("stream field is not a boolean")
    return document


def _model(name: str, created: int) -> dict:
    return {"id": name, "object": "model", "created": created, "owned_by": "OVMS"}


def _available(model) -> bool:
    return bool(model.available_versions())
