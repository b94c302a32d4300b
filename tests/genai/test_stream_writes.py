"""How a streamed answer's events become writes: text events that arrived together go out in
one write (the loop had fallen behind the engine), events that arrive one by one go out one by
one, and an engine failure still sends the text that came before it, then the error."""

from __future__ import annotations

import asyncio

import orjson

from ovmsx.genai.engine.engine_client import Generation
from ovmsx.genai.openai.generation_meter import GenerationMeter
from ovmsx.genai.openai.openai_request import COMPLETIONS, GenerationRequest
from ovmsx.genai.text_generation.llm_servable import _chunks
from ovmsx.genai.text_generation.openai_response import DONE, Reply

RESULT = {
    "prompt_tokens": 2,
    "completion_tokens": 3,
    "first_token_at": 0.0,
    "choices": [{"text": "abc", "finish_reason": "stop"}],
}


class Engine:
    """What a Generation asks of its engine: to stop a request."""

    def __init__(self) -> None:
        self.stopped: list[int] = []

    def stop(self, request_id: int) -> None:
        self.stopped.append(request_id)


class Call:
    """Counts the responses the meter reports (the metrics' view of a stream)."""

    def __init__(self) -> None:
        self.responses = 0

    def accepted(self) -> None:
        pass

    def responded(self) -> None:
        self.responses += 1


def texts(write: bytes) -> list[str]:
    """The completion texts of a write's SSE events."""
    events = [line[len(b"data: ") :] for line in write.split(b"\n") if line.startswith(b"data: ")]
    return [orjson.loads(event)["choices"][0]["text"] for event in events if event != b"[DONE]"]


async def writes(generation: Generation, call: Call, feed) -> list[bytes]:
    request = GenerationRequest(endpoint=COMPLETIONS, model="m", stream=True)
    meter = GenerationMeter(call, None, lambda: None)
    first = await generation.__anext__()
    out = []
    feeder = asyncio.ensure_future(feed())
    async for write in _chunks(generation, Reply(request), "node", meter, first):
        meter.responded()  # as AnswerStream does for each write
        out.append(write)
    await feeder
    return out


def test_text_that_arrived_together_goes_out_in_one_write() -> None:
    generation, call = Generation(Engine(), 1), Call()
    for piece in ("a", "b", "c"):
        generation.deliver("text", (0, piece, False, None))
    generation.deliver("done", RESULT)

    async def nothing() -> None:
        pass

    out = asyncio.run(writes(generation, call, nothing))
    assert [texts(write) for write in out] == [[""], ["a", "b", "c"], []]
    assert out[-1] == DONE
    assert call.responses == 5  # the opening, one per text event, [DONE]


def test_text_that_arrives_piece_by_piece_goes_out_piece_by_piece() -> None:
    generation, call = Generation(Engine(), 1), Call()
    generation.deliver("text", (0, "a", False, None))

    async def one_by_one() -> None:
        for piece in ("b", "c"):
            await asyncio.sleep(0.01)
            generation.deliver("text", (0, piece, False, None))
        await asyncio.sleep(0.01)
        generation.deliver("done", RESULT)

    out = asyncio.run(writes(generation, call, one_by_one))
    assert [texts(write) for write in out] == [[""], ["a"], ["b"], ["c"], []]


def test_an_engine_failure_sends_the_text_before_it_then_the_error() -> None:
    generation, call = Generation(Engine(), 1), Call()
    generation.deliver("text", (0, "a", False, None))
    generation.deliver("text", (0, "b", False, None))
    generation.deliver("failed", "the engine process died")

    async def nothing() -> None:
        pass

    out = asyncio.run(writes(generation, call, nothing))
    assert [texts(write) for write in out[:2]] == [[""], ["a", "b"]]
    assert b"the engine process died" in out[2]
    assert len(out) == 3
