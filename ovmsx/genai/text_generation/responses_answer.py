"""``POST /v3/responses`` on an LLM servable: the request translated to its chat equivalent
(responses_api), generated as chat is, and answered as a Response object or as the Responses
event stream. Text goes through the servable's output parsers as in chat, so reasoning and tool
calls become reasoning and function-call items.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson

from ovmsx.genai.engine.engine_client import EngineFailed, Generation
from ovmsx.genai.openai.generation_meter import GenerationMeter
from ovmsx.genai.openai.responses_api import ResponseBuilder
from ovmsx.genai.output_parsers import OutputParser
from ovmsx.genai.text_generation.llm_parsers import parsed_deltas, parsed_message
from ovmsx.genai.text_generation.unary_result import unary_result


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
        parsed_message(parser, choice["text"], choice["finish_reason"])
        for choice in result["choices"]
    ]
    # The engine's result carries prompt_tokens and completion_tokens, the usage it reads.
    return orjson.dumps(builder.whole_choices(choices, result))


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
                deltas, finish_reason = parsed_deltas(text_parser, text, finish_reason)
                if final:
                    reason = finish_reason
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
                yield b"".join(events.finish(final_reason, data))
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
