"""``POST /v3/responses`` on an LLM servable: the request translated to its chat equivalent
(responses_api), generated as chat is, and answered as a Response object or as the Responses
event stream. Text goes through the servable's output parsers as in chat, so reasoning and tool
calls become reasoning and function-call items.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson

from ovmsx.genai.engine_client import EngineFailed, Generation
from ovmsx.genai.generation_meter import GenerationMeter
from ovmsx.genai.output_parsers import OutputParser
from ovmsx.genai.responses_api import ResponseBuilder
from ovmsx.genai.unary_result import unary_result

EMPTY_MESSAGE = {"content": "", "role": "assistant", "tool_calls": []}


def _usage(result: dict) -> dict:
    return {
        "prompt_tokens": result["prompt_tokens"],
        "completion_tokens": result["completion_tokens"],
    }


def _message(text: str, reason: str, parser: OutputParser | None) -> tuple[dict, str]:
    if parser is None:
        return {**EMPTY_MESSAGE, "content": text}, reason
    parsed = parser.parse(text)
    if parsed.tool_calls and reason == "stop":
        reason = "tool_calls"
    return parsed.message(), reason


async def whole_response(
    generation: Generation,
    builder: ResponseBuilder,
    parser: OutputParser | None,
    node: str,
    meter: GenerationMeter,
) -> bytes:
    result = await unary_result(generation, node)
    meter.finished(result, len(result["choices"]))
    choices = [
        _message(choice["text"], choice["finish_reason"], parser) for choice in result["choices"]
    ]
    return orjson.dumps(builder.whole_choices(choices, _usage(result)))


async def response_events(
    generation: Generation,
    builder: ResponseBuilder,
    parser: OutputParser | None,
    node: str,
    meter: GenerationMeter,
    first: tuple[str, object],
) -> AsyncIterator[bytes]:
    """The event stream, from the engine's first event (the request was taken) on. A failure
    is a ``response.failed`` event and ``[DONE]``, as OVMS ends a failed Responses stream."""
    events = builder.stream()
    text_parser = parser.stream() if parser is not None else None
    reason: str | None = None
    try:
        yield b"".join(events.start())
        event: tuple[str, object] | None = first
        while event is not None:
            kind, data = event
            if kind == "text":
                _, text, final, finish_reason = data
                deltas = []
                if text:
                    deltas = text_parser.feed(text) if text_parser else [{"content": text}]
                if final:
                    reason = finish_reason
                    if text_parser is not None:
                        deltas += text_parser.finish()
                        if text_parser.tool_calls_seen and reason == "stop":
                            reason = "tool_calls"
                frames = b"".join(frame for delta in deltas for frame in events.delta(delta))
                if frames:  # never an empty write: it would end the chunked body
                    yield frames
            elif kind == "done":
                if "error" in data:
                    meter.failed = True
                    yield b"".join(events.fail(data["error"]))
                    return
                meter.finished(data, 1)
                final_reason = reason or data["choices"][0]["finish_reason"]
                yield b"".join(events.finish(final_reason, _usage(data)))
                return
            elif kind == "error":
                meter.failed = True
                yield b"".join(events.fail(str(data)))
                return
            event = await generation.__anext__()
    except EngineFailed as error:
        meter.failed = True
        yield b"".join(events.fail(str(error)))
    finally:
        generation.close()
