"""Answers in OpenAI's shapes, a superset of OVMS's (COMPAT_GENAI §5): OVMS's fields and order,
plus an ``id`` (OVMS sends none; the openai client's types expect one) and
``system_fingerprint: null`` left out as OVMS does.

Streaming is server-sent events, ``data: <json>\\n\\n`` frames ending with ``data: [DONE]``: a
first chunk with the assistant role, content deltas, a final delta with the finish reason, and
with ``stream_options.include_usage`` a usage chunk (and ``"usage": null`` on the others).
"""

from __future__ import annotations

import time
import uuid

import orjson

from ovmsx.genai.openai.openai_request import CHAT, GenerationRequest
from ovmsx.genai.output_parsers import OutputParser, StreamParser
from ovmsx.genai.text_generation.llm_parsers import parsed_deltas, parsed_message

DONE = b"data: [DONE]\n\n"


class Reply:
    """What one request's answer has in common across its chunks. With an output ``parser``
    (chat only), text becomes content, ``reasoning_content`` and ``tool_calls``, and an answer
    that made calls finishes with ``"tool_calls"`` where it would have said ``"stop"``."""

    __slots__ = ("_opening", "_streams", "created", "id", "model", "object", "parser", "request")

    def __init__(
        self, request: GenerationRequest, parser: OutputParser | None = None, opening: bool = True
    ) -> None:
        self.request = request
        self.parser = parser
        self._opening = opening
        self._streams: dict[int, StreamParser] = {}
        self.created = int(time.time())
        chat = request.endpoint == CHAT
        self.id = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}"
        self.model = request.model
        if request.stream:
            # OVMS names completions chunks "text_completion.chunk"; OpenAI calls them
            # "text_completion". The openai client reads either.
            self.object = "chat.completion.chunk" if chat else "text_completion"
        else:
            self.object = "chat.completion" if chat else "text_completion"

    # -- unary -----------------------------------------------------------------------------

    def whole(self, result: dict) -> bytes:
        request = self.request
        chat = request.endpoint == CHAT
        choices = []
        for choice in result["choices"]:
            text = choice["text"]
            if request.echo:
                text = (request.prompt or "") + text
            message, reason = parsed_message(self.parser, text, choice["finish_reason"])
            entry: dict = {"finish_reason": reason, "index": choice["index"]}
            entry["logprobs"] = _logprobs(choice, chat, request) if request.logprobs else None
            if chat:
                entry["message"] = message
            else:
                entry["text"] = text
            choices.append(entry)
        return orjson.dumps({**self._head(choices), "usage": _usage(result)})

    # -- streaming -------------------------------------------------------------------------

    def opening(self) -> bytes:
        """The first chunk: the assistant's role, no text yet (empty: the stream has none)."""
        if not self._opening:
            return b""
        if self.request.endpoint == CHAT:
            delta: dict = {"index": 0, "delta": {"role": "assistant", "content": None}}
        else:
            delta = {"index": 0, "text": ""}
        delta["finish_reason"] = None
        return self._event([delta], usage_key=False)

    def text(self, index: int, text: str, finish_reason: str | None = None) -> bytes:
        """The chunk(s) of one piece of a choice's text (empty when a parser holds it back)."""
        if self.parser is not None:
            return self._parsed(index, text, finish_reason)
        if self.request.endpoint == CHAT:
            choice = {
                "index": index,
                "logprobs": None,
                "delta": {"content": text} if text else {},
                "finish_reason": finish_reason,
            }
        else:
            choice = {
                "index": index,
                "logprobs": None,
                "text": text,
                "finish_reason": finish_reason,
            }
        return self._event([choice])

    def _parsed(self, index: int, text: str, finish_reason: str | None) -> bytes:
        assert self.parser is not None
        stream = self._streams.get(index)
        if stream is None:
            stream = self._streams[index] = self.parser.stream()
        deltas, finish_reason = parsed_deltas(stream, text, finish_reason)
        frames = [
            self._event([{"index": index, "logprobs": None, "delta": d, "finish_reason": None}])
            for d in deltas
        ]
        if finish_reason is not None:
            last = {"index": index, "logprobs": None, "delta": {}, "finish_reason": finish_reason}
            frames.append(self._event([last]))
        return b"".join(frames)

    def usage(self, result: dict) -> bytes:
        return self._frame({**self._head([]), "usage": _usage(result)})

    def _head(self, choices: list) -> dict:
        """What every answer and chunk starts with, in OVMS's order (and an ``id``)."""
        return {
            "id": self.id,
            "choices": choices,
            "created": self.created,
            "model": self.model,
            "object": self.object,
        }

    def _event(self, choices: list, usage_key: bool = True) -> bytes:
        body = self._head(choices)
        if usage_key and self.request.include_usage:
            body["usage"] = None
        return self._frame(body)

    @staticmethod
    def _frame(body: dict) -> bytes:
        return b"data: " + orjson.dumps(body) + b"\n\n"


def _usage(result: dict) -> dict:
    prompt = result["prompt_tokens"]
    completion = result["completion_tokens"]
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _logprobs(choice: dict, chat: bool, request: GenerationRequest) -> dict:
    tokens = choice.get("tokens", [])
    values = [None if value > 0 else value for value in choice.get("logprobs", [])]
    if chat:
        return {
            "content": [
                {
                    "token": token,
                    "logprob": value,
                    "bytes": list(token.encode("utf-8")),
                    "top_logprobs": [],
                }
                for token, value in zip(tokens, values, strict=False)
            ]
        }
    offsets = []
    # Offsets count from the start of the answer's text, which holds the echoed prompt; when
    # the prompt's own tokens are listed (``echoed``), they start at 0.
    echoed = request.echo and not choice.get("echoed")
    position = len((request.prompt or "").encode("utf-8")) if echoed else 0
    for token in tokens:
        offsets.append(position)
        position += len(token.encode("utf-8"))
    return {
        "tokens": tokens,
        "token_logprobs": values,
        "top_logprobs": [{token: value} for token, value in zip(tokens, values, strict=False)],
        "text_offset": offsets,
    }
