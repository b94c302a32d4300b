"""A streamed Response: server-sent events, ``data: <json>`` frames without ``event:`` lines,
each JSON with its ``type`` and a ``sequence_number`` counting from 1 (OVMS's first value), and
the stream's end marked by ``data: [DONE]``.

The events come in OVMS's order:

- ``response.created`` and ``response.in_progress`` (the Response, in progress, no output);
- reasoning, while it lasts: ``response.output_item.added`` (a ``reasoning`` item, empty
  summary), ``response.reasoning_summary_part.added``, ``response.reasoning_summary_text.delta``
  per piece; closed when text or a tool call follows (or at the end) by
  ``response.reasoning_summary_text.done``, ``response.reasoning_summary_part.done`` and
  ``response.output_item.done``;
- text: ``response.output_item.added`` (a ``message``), ``response.content_part.added`` (an
  empty ``output_text``), then ``response.output_text.delta`` per piece;
- each tool call: ``response.output_item.added`` (a ``function_call``, empty arguments), then
  ``response.function_call_arguments.delta`` per piece;
- at the end: for each call ``response.function_call_arguments.done`` and
  ``response.output_item.done``; for the message (opened now, empty, when there was neither
  text nor a call) ``response.output_text.done``, ``response.content_part.done`` and
  ``response.output_item.done``; then ``response.completed``, or ``response.incomplete`` when
  the tokens ran out, with the whole Response and its usage;
- a failure: ``response.failed`` (status ``failed``, ``error`` ``{code: server_error,
  message}``, the output so far), then ``[DONE]``.

Each item's ``output_index`` is its place in the order items were opened (OVMS fixes the
reasoning item at 0 and numbers the others as if reasoning, calls and text came in that order:
the same numbers whenever they do). The openai client's stream accumulator needs every index to
name one item. The text-delta events carry ``logprobs: []``, which OVMS leaves out and the
client's types require.
"""

from __future__ import annotations

import random
import string
from typing import TYPE_CHECKING

import orjson

from .items import (
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    INCOMPLETE,
    function_call_item,
    message_item,
    reasoning_item,
    summary_part,
    text_part,
)

if TYPE_CHECKING:
    from .response import ResponseBuilder

DONE = b"data: [DONE]\n\n"
FIRST_SEQUENCE_NUMBER = 1
SERVER_ERROR = "server_error"
_ID_ALPHABET = string.ascii_letters + string.digits
_random = random.SystemRandom()


class _Item:
    """One output item being streamed."""

    __slots__ = ("call_id", "index", "item_id", "kind", "name", "pieces")

    def __init__(self, kind: str, item_id: str, index: int) -> None:
        self.kind = kind
        self.item_id = item_id
        self.index = index
        self.pieces: list[str] = []
        self.name = ""
        self.call_id = item_id

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def body(self, status: str) -> dict:
        """The item as an event or the Response shows it with this status."""
        if self.kind == "reasoning":
            return reasoning_item(self.item_id, None if status == IN_PROGRESS else self.text)
        if self.kind == "message":
            return message_item(self.item_id, self.text, status)
        arguments = "" if status == IN_PROGRESS else self.text
        return function_call_item(self.call_id, self.name, arguments, status)


class ResponseEventStream:
    """The events of one streamed Response, built from chat-chunk deltas. Every method returns
    the frames to send now (created and in_progress come first whichever is called first);
    ``finish`` and ``fail`` end the stream with ``data: [DONE]``."""

    def __init__(self, builder: ResponseBuilder) -> None:
        self._builder = builder
        self._sequence = FIRST_SEQUENCE_NUMBER
        self._started = False
        self._ended = False
        self._items: list[_Item] = []
        self._reasoning: _Item | None = None
        self._message: _Item | None = None
        self._calls: dict[int, _Item] = {}

    def start(self) -> list[bytes]:
        """``response.created`` and ``response.in_progress``, once."""
        if self._started:
            return []
        self._started = True
        frames = []
        for kind in ("response.created", "response.in_progress"):
            response = self._builder.response(IN_PROGRESS, [], None)
            frames.append(self._event(kind, response=response))
        return frames

    def delta(self, delta: dict) -> list[bytes]:
        """A chat chunk's ``delta``: ``reasoning_content``, ``content`` and ``tool_calls``
        pieces (``[{index, id, type, function: {name, arguments}}]``, the name and id on a
        call's first piece)."""
        frames = self.start()
        self._check_running()
        reasoning = delta.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            frames += self._reasoning_piece(reasoning)
        content = delta.get("content")
        if isinstance(content, str) and content:
            frames += self._text_piece(content)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    frames += self._call_piece(call)
        return frames

    def finish(self, finish_reason: str, usage: dict) -> list[bytes]:
        """Closes every item and ends with ``response.completed`` (``response.incomplete``
        when ``finish_reason`` is ``length``), the whole Response with ``usage``
        (``prompt_tokens``, ``completion_tokens``), and ``data: [DONE]``."""
        frames = self.start()
        self._check_running()
        self._ended = True
        status = INCOMPLETE if finish_reason == "length" else COMPLETED
        frames += self._close_reasoning()
        calls = [item for item in self._items if item.kind == "function_call"]
        for item in calls:
            frames.append(
                self._event(
                    "response.function_call_arguments.done",
                    item_id=item.call_id,
                    output_index=item.index,
                    call_id=item.call_id,
                    arguments=item.text,
                )
            )
            frames.append(self._item_event("response.output_item.done", item, status))
        if self._message is None and not calls:
            frames += self._open_message()
        message = self._message
        if message is not None:
            location = self._text_location(message)
            frames.append(
                self._event("response.output_text.done", **location, text=message.text, logprobs=[])
            )
            frames.append(
                self._event("response.content_part.done", **location, part=text_part(message.text))
            )
            frames.append(self._item_event("response.output_item.done", message, status))
        response = self._builder.response(status, self._output(status), usage)
        kind = "response.incomplete" if status == INCOMPLETE else "response.completed"
        frames.append(self._event(kind, response=response))
        frames.append(DONE)
        return frames

    def fail(self, message: str) -> list[bytes]:
        """``response.failed`` with OVMS's ``server_error`` code and ``message``, the output
        so far (items not finished shown as incomplete), then ``data: [DONE]``."""
        frames = self.start()
        self._check_running()
        self._ended = True
        error = {"code": SERVER_ERROR, "message": message}
        response = self._builder.response(FAILED, self._output(INCOMPLETE), None, error)
        frames.append(self._event("response.failed", response=response))
        frames.append(DONE)
        return frames

    # -- items -----------------------------------------------------------------------------

    def _reasoning_piece(self, text: str) -> list[bytes]:
        frames: list[bytes] = []
        item = self._reasoning
        if item is None:
            count = sum(1 for i in self._items if i.kind == "reasoning")
            item = self._reasoning = self._add("reasoning", f"rs-{count}")
            frames.append(self._item_event("response.output_item.added", item, IN_PROGRESS))
            frames.append(
                self._event(
                    "response.reasoning_summary_part.added",
                    **self._summary_location(item),
                    part=summary_part(""),
                )
            )
        item.pieces.append(text)
        frames.append(
            self._event(
                "response.reasoning_summary_text.delta", **self._summary_location(item), delta=text
            )
        )
        return frames

    def _close_reasoning(self) -> list[bytes]:
        item = self._reasoning
        if item is None:
            return []
        self._reasoning = None
        location = self._summary_location(item)
        return [
            self._event("response.reasoning_summary_text.done", **location, text=item.text),
            self._event(
                "response.reasoning_summary_part.done", **location, part=summary_part(item.text)
            ),
            self._item_event("response.output_item.done", item, COMPLETED),
        ]

    def _text_piece(self, text: str) -> list[bytes]:
        frames = self._close_reasoning()
        if self._message is None:
            frames += self._open_message()
        message = self._message
        message.pieces.append(text)
        location = self._text_location(message)
        frames.append(
            self._event("response.output_text.delta", **location, delta=text, logprobs=[])
        )
        return frames

    def _open_message(self) -> list[bytes]:
        count = sum(1 for i in self._items if i.kind == "message")
        message = self._message = self._add("message", f"msg-{count}")
        return [
            self._item_event("response.output_item.added", message, IN_PROGRESS),
            self._event(
                "response.content_part.added", **self._text_location(message), part=text_part("")
            ),
        ]

    def _call_piece(self, call: dict) -> list[bytes]:
        frames = self._close_reasoning()
        index = call.get("index", 0)
        if not isinstance(index, int):
            index = 0
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        item = self._calls.get(index)
        name = function.get("name")
        if item is None and isinstance(name, str):
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id:
                call_id = "".join(_random.choices(_ID_ALPHABET, k=9))
            item = self._calls[index] = self._add("function_call", call_id)
            item.name = name
            frames.append(self._item_event("response.output_item.added", item, IN_PROGRESS))
        arguments = function.get("arguments")
        if item is not None and isinstance(arguments, str) and arguments:
            item.pieces.append(arguments)
            frames.append(
                self._event(
                    "response.function_call_arguments.delta",
                    item_id=item.call_id,
                    output_index=item.index,
                    call_id=item.call_id,
                    delta=arguments,
                )
            )
        return frames

    def _add(self, kind: str, item_id: str) -> _Item:
        item = _Item(kind, item_id, len(self._items))
        self._items.append(item)
        return item

    def _output(self, status: str) -> list[dict]:
        """The Response's output: every item in output-index order, the final ones with the
        response's status (reasoning items have none)."""
        return [item.body(status) for item in self._items]

    # -- events ----------------------------------------------------------------------------

    @staticmethod
    def _text_location(item: _Item) -> dict:
        return {"output_index": item.index, "content_index": 0, "item_id": item.item_id}

    @staticmethod
    def _summary_location(item: _Item) -> dict:
        return {"output_index": item.index, "summary_index": 0, "item_id": item.item_id}

    def _item_event(self, kind: str, item: _Item, status: str) -> bytes:
        return self._event(kind, output_index=item.index, item=item.body(status))

    def _event(self, kind: str, **fields: object) -> bytes:
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return b"data: " + orjson.dumps(event) + b"\n\n"

    def _check_running(self) -> None:
        if self._ended:
            raise RuntimeError("the response stream has already ended")
