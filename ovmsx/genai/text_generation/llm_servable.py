"""One LLM servable answering a ``/v3`` request: check the fields, render the prompt, run it in
the engine, and answer whole or as a stream of server-sent events.

Errors are OVMS's: a refused field or a prompt the engine refuses is 400 with the reason, in
MediaPipe's wording (the request ran in a graph node there). A stream that fails before its
first chunk answers 400 with plain JSON; once chunks have gone out, the error is appended to the
stream as JSON, as OVMS does. A request whose client leaves is stopped in the engine at once
(``Generation.close`` in the ``finally`` blocks below, reached when the frontend cancels).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import orjson

from ovmsx.genai.engine.engine_client import (
    EngineClient,
    EngineFailed,
    EngineUnavailable,
    Generation,
)
from ovmsx.genai.engine.engine_messages import EngineInfo, EngineRequest
from ovmsx.genai.engine.grammar_checker import GrammarChecker, GrammarUnchecked
from ovmsx.genai.openai.generation_meter import GenerationMeter
from ovmsx.genai.openai.openai_request import (
    CHAT,
    RESPONSES,
    GenerationRequest,
    RequestError,
    RequestLimits,
    parse_request,
)
from ovmsx.genai.openai.responses_api import (
    ResponseBuilder,
    ResponsesRequestError,
    translate_request,
)
from ovmsx.genai.openai.tokenize_request import parse_tokenize, tokens_answer
from ovmsx.genai.openai.v3_errors import RETRY_AFTER_S, engine_failure, execution_error, unavailable
from ovmsx.genai.text_generation.chat_template import ChatTemplate, TemplateError
from ovmsx.genai.text_generation.llm_parsers import Parsers
from ovmsx.genai.text_generation.openai_response import DONE, Reply
from ovmsx.genai.text_generation.responses_answer import response_events, whole_response
from ovmsx.genai.text_generation.unary_result import unary_result


class LLMServable:
    def __init__(
        self,
        engine: EngineClient,
        template: ChatTemplate,
        limits: RequestLimits,
        info: EngineInfo,
        parsers: Parsers | None = None,
    ) -> None:
        self.engine = engine
        self.template = template
        self.limits = limits
        self.info = info
        self.parsers = parsers or Parsers()
        self.grammar = GrammarChecker(engine.settings.models_path)

    def close(self) -> None:
        """Stop the engine and the grammar checker (blocking: call from a worker thread)."""
        try:
            self.engine.close()
        finally:
            self.grammar.close()

    async def answer(
        self, endpoint: str, body: dict, node: str, meter: GenerationMeter
    ) -> bytes | AsyncIterator[bytes]:
        """The whole body (unary) or the stream's chunks (an ``AnswerStream``); raises
        ``V3Error``. ``meter`` hears of the result; a stream also counts its chunks and ends the
        call when closed, a unary answer's call is ended by the caller."""
        builder = None
        try:
            if endpoint == RESPONSES:
                # The Responses API is chat underneath (responses_answer.py).
                equivalent = translate_request(body, self.limits)
                builder = ResponseBuilder(body["model"], equivalent.request_echo)
                body, endpoint = equivalent.chat_body, CHAT
            request = parse_request(body, endpoint, self.limits)
            prompt = self._prompt(request)
        except (RequestError, TemplateError, ResponsesRequestError) as error:
            raise execution_error(node, str(error)) from None
        parser = None
        skip_special_tokens = request.skip_special_tokens
        # skip_special_tokens: false turns the tool and reasoning parsers off, as in OVMS.
        if endpoint == CHAT and request.skip_special_tokens:
            parser = self.parsers.for_request(request.tools, prompt)
            if self.parsers.keeps_special_tokens(request.tools):
                skip_special_tokens = False
            guidance = self.parsers.guidance(request.tools, request.tools_required)
            if guidance is not None and "structured_output" not in request.config:
                request.config["structured_output"] = guidance
        grammar_checked = await self._check_grammar(request.config, node)
        engine_request = EngineRequest(
            id=0,
            prompt=prompt,
            add_special_tokens=endpoint != CHAT,
            config=request.config,
            stream=request.stream,
            logprobs=request.logprobs,
            max_tokens=request.max_tokens,
            echo=request.echo,
            skip_special_tokens=skip_special_tokens,
            grammar_checked=grammar_checked,
        )
        try:
            generation = self.engine.submit(engine_request)
        except EngineUnavailable as error:
            raise unavailable(str(error), RETRY_AFTER_S) from None
        if builder is not None:
            if not request.stream:
                return await whole_response(generation, builder, parser, node, meter)
            return await _stream(
                generation,
                node,
                meter,
                lambda first: response_events(generation, builder, parser, node, meter, first),
            )
        # OVMS's stateful (LM) pipeline streams no opening {role} chunk; continuous batching does.
        reply = Reply(request, parser, opening=self.engine.settings.pipeline != "LM")
        if not request.stream:
            return await _whole(generation, reply, node, meter)
        return await _stream(
            generation, node, meter, lambda first: _chunks(generation, reply, node, meter, first)
        )

    async def _check_grammar(self, config: dict, node: str) -> bool:
        """Refuse structured output the engine could not compile, or not quickly enough
        (grammar_checker.py); False when the engine must check it itself."""
        structured = config.get("structured_output")
        if structured is None:
            return True
        try:
            problem = await self.grammar.problem(structured)
        except GrammarUnchecked:
            return False
        if problem is not None:
            raise execution_error(node, f"response_format cannot be followed: {problem}")
        return True

    async def tokenize(self, body: dict, node: str) -> bytes:
        """``POST /v3/tokenize``: the prompt's token ids (tokenize_request.py)."""
        try:
            request = parse_tokenize(body, self.info.max_model_length)
        except RequestError as error:
            raise execution_error(node, str(error)) from None
        try:
            generation = self.engine.tokenize(request)
        except EngineUnavailable as error:
            raise unavailable(str(error), RETRY_AFTER_S) from None
        try:
            async for kind, data in generation:
                if kind == "error":
                    raise execution_error(node, data)
                return orjson.dumps(tokens_answer(request, data["rows"]))
        except EngineFailed as error:
            raise engine_failure(node, str(error)) from None
        finally:
            generation.close()
        raise execution_error(node, "tokenization ended without a result", "INTERNAL")

    def _prompt(self, request: GenerationRequest) -> str:
        if request.endpoint != CHAT:
            return request.prompt or ""
        prompt = self.template.render(
            request.messages or [],
            request.tools,
            request.add_generation_prompt,
            request.chat_template_kwargs,
        )
        if not prompt:
            raise RequestError("Final prompt after applying chat template is empty")
        return prompt


async def _whole(generation: Generation, reply: Reply, node: str, meter: GenerationMeter) -> bytes:
    result = await unary_result(generation, node)
    meter.finished(result, reply.request.n)
    return reply.whole(result)


async def _stream(
    generation: Generation,
    node: str,
    meter: GenerationMeter,
    chunks: Callable[[tuple[str, object]], AsyncIterator[bytes]],
) -> AsyncIterator[bytes]:
    """Wait for the engine to take the request (its refusal is a plain 400), then stream the
    frames ``chunks`` makes from that first event on."""
    try:
        first = await generation.__anext__()
    except EngineFailed as error:
        generation.close()
        raise engine_failure(node, str(error)) from None
    except BaseException:  # cancelled: the client left before the engine took the request
        generation.close()
        raise
    if first[0] == "error":
        generation.close()
        raise execution_error(node, first[1])
    return AnswerStream(generation, chunks(first), meter)


class AnswerStream:
    """A streamed answer's chunks, each counted as a response. ``aclose`` (which the frontend
    calls whether or not it ever sent a chunk: an async generator that never ran would skip its
    cleanup) stops the generation if it is still running and ends the call's metrics."""

    def __init__(
        self, generation: Generation, chunks: AsyncIterator[bytes], meter: GenerationMeter
    ) -> None:
        self._generation = generation
        self._chunks = chunks
        self._meter = meter
        self._complete = False
        self._closed = False

    def __aiter__(self) -> AnswerStream:
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await self._chunks.__anext__()
        except StopAsyncIteration:
            self._complete = True
            raise
        self._meter.responded()
        return chunk

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._generation.close()
        try:
            await self._chunks.aclose()
        finally:
            self._meter.end(self._complete and not self._meter.failed)


async def _chunks(
    generation: Generation,
    reply: Reply,
    node: str,
    meter: GenerationMeter,
    first: tuple[str, object],
) -> AsyncIterator[bytes]:
    try:
        opening = reply.opening()
        if opening:
            yield opening
        if reply.request.echo and reply.request.prompt:
            yield reply.text(0, reply.request.prompt)
        event: tuple[str, object] | None = first
        while event is not None:
            kind, data = event
            if kind == "text":
                frames, event, failure = _text_ready(generation, reply, data)
                if frames:  # an empty write would end a chunked body
                    for _ in range(len(frames) - 1):
                        meter.responded()  # one response per event, as when written alone
                    yield b"".join(frames)
                if failure is not None:
                    raise failure
                if event is None:
                    event = await generation.__anext__()
                continue
            if kind == "done":
                if "error" in data:
                    meter.failed = True
                    yield _stream_error(node, data["error"])
                    return
                meter.finished(data, reply.request.n)
                if reply.request.include_usage:
                    yield reply.usage(data)
                yield DONE
                return
            elif kind == "error":
                meter.failed = True
                yield _stream_error(node, data)
                return
            event = await generation.__anext__()
    except EngineFailed as error:
        meter.failed = True
        yield _stream_error(node, str(error))
    finally:
        generation.close()


def _text_ready(
    generation: Generation, reply: Reply, data
) -> tuple[list[bytes], tuple[str, object] | None, EngineFailed | None]:
    """The frames of a text event and of the text events that arrived with it (the loop was
    busy while the engine stepped: they go out in one write, so the stream's work per token
    drops as the server gets busier, and a client reads the same events); then the next event
    if it has arrived, and the engine's failure if that came next."""
    frames: list[bytes] = []
    while True:
        index, text, final, reason = data
        if text or final:
            frame = reply.text(index, text, reason)
            if frame:  # a parser may hold text back
                frames.append(frame)
        try:
            event = generation.next_ready()
        except EngineFailed as failure:  # sent after the text that came before it
            return frames, None, failure
        if event is None or event[0] != "text":
            return frames, event, None
        data = event[1]


def _stream_error(node: str, message: str) -> bytes:
    """An error after the stream began: an SSE event whose ``error`` object the OpenAI clients
    raise (OVMS appends bare JSON, which an SSE client never sees, so a cut stream looked
    complete). No ``[DONE]`` follows: the stream did not complete."""
    error = {"message": execution_error(node, message, "INTERNAL").message, "type": "server_error"}
    return b"data: " + orjson.dumps({"error": {**error, "param": None, "code": 500}}) + b"\n\n"
