"""The state machine every parse runs: a buffer of unread text, the handler of the current part of
the output (content, reasoning, a tool-call region), and what has been recognised so far.

The unary parse and the streamed one are the same run (the whole text fed at once, or piece by
piece), so they can differ only if a handler decides differently on a different split, which
``text_scan`` is there to prevent.
"""

from __future__ import annotations

from typing import Protocol

from .message import ParsedMessage, ToolCall, new_call_id
from .text_scan import find_tag, leading_whitespace, prefix_state


class Handler:
    """One part of the output. ``step`` acts on ``ctx.buf`` and says whether it did anything
    (consumed text or changed state); with ``final`` no more text will come, so nothing may be
    held back. ``close`` settles what is still open once the text has run out."""

    def step(self, ctx: Context, final: bool) -> bool:
        raise NotImplementedError

    def close(self, ctx: Context) -> None:
        return None


class ToolFormat(Protocol):
    start_tags: tuple[str, ...]
    """Tags that open a tool-call region anywhere in the content."""
    start_prefixes: tuple[str, ...]
    """Text that opens one only at the start of the content, after any whitespace (the text and
    the whitespace are left for the handler)."""
    content_drops: tuple[str, ...]
    """Special tokens that are not content (end-of-turn tokens, when the output is decoded with
    special tokens for the format's sake)."""

    def enter(self, opener: str) -> Handler: ...


class ReasoningFormat(Protocol):
    start_tag: str

    def enter(self, implicit: bool) -> Handler: ...


class _Call:
    __slots__ = ("arguments", "id", "name")

    def __init__(self, name: str) -> None:
        self.id = new_call_id()
        self.name = name
        self.arguments: list[str] = []


class Context:
    """The run's buffer and current handler, and both of its outputs: the deltas not yet handed
    out, and everything recognised so far (for the unary message)."""

    def __init__(
        self,
        tool_format: ToolFormat | None,
        reasoning_format: ReasoningFormat | None,
        starts_in_reasoning: bool,
    ) -> None:
        self.buf = ""
        self.tool_format = tool_format
        self.reasoning_format = reasoning_format
        # Only the first reasoning block, before any tool call, is reasoning (as OVMS's unary
        # parse takes the first <think>...</think> out before looking for calls).
        self.reasoning_pending = reasoning_format is not None
        self.deltas: list[dict] = []
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[_Call] = []
        self.handler: Handler = ContentHandler(at_start=True)
        if reasoning_format is not None and starts_in_reasoning:
            self.reasoning_pending = False
            self.handler = reasoning_format.enter(implicit=True)

    def consume(self, n: int) -> str:
        taken, self.buf = self.buf[:n], self.buf[n:]
        return taken

    def switch(self, handler: Handler) -> None:
        self.handler = handler

    def resume_content(self, at_start: bool = False) -> None:
        self.handler = ContentHandler(at_start)

    def emit_content(self, text: str) -> None:
        if text:
            self.content.append(text)
            self._text_delta("content", text)

    def emit_reasoning(self, text: str) -> None:
        if text:
            self.reasoning.append(text)
            self._text_delta("reasoning_content", text)

    def start_call(self, name: str) -> None:
        call = _Call(name)
        self.calls.append(call)
        function = {"name": name, "arguments": ""}
        entry = {"index": len(self.calls) - 1, "id": call.id, "type": "function"}
        self.deltas.append({"tool_calls": [{**entry, "function": function}]})

    def emit_args(self, text: str) -> None:
        if not text:
            return
        self.calls[-1].arguments.append(text)
        index = len(self.calls) - 1
        last = self.deltas[-1] if self.deltas else None
        if last is not None and "tool_calls" in last:
            entry = last["tool_calls"][0]
            if entry["index"] == index and "id" not in entry:
                entry["function"]["arguments"] += text
                return
        self.deltas.append({"tool_calls": [{"index": index, "function": {"arguments": text}}]})

    def _text_delta(self, key: str, text: str) -> None:
        last = self.deltas[-1] if self.deltas else None
        if last is not None and last.keys() == {key}:
            last[key] += text
        else:
            self.deltas.append({key: text})

    def take_deltas(self) -> list[dict]:
        out, self.deltas = self.deltas, []
        return out

    def message(self) -> ParsedMessage:
        calls = [ToolCall(c.id, c.name, "".join(c.arguments)) for c in self.calls]
        return ParsedMessage("".join(self.content), "".join(self.reasoning) or None, calls)


def run(ctx: Context, final: bool) -> None:
    while ctx.handler.step(ctx, final):
        pass
    if final:
        ctx.handler.close(ctx)
        # Every handler consumes all text when final; this only keeps a handler bug from
        # swallowing model output silently.
        ctx.emit_content(ctx.consume(len(ctx.buf)))


class ContentHandler(Handler):
    """Plain content, watching for the reasoning start (while reasoning may still come) and for
    the tool format's start tags; at the start of the content also for its start prefixes."""

    def __init__(self, at_start: bool) -> None:
        self.at_start = at_start

    def step(self, ctx: Context, final: bool) -> bool:
        tool = ctx.tool_format
        if self.at_start:
            self.at_start = False
            if tool is not None and tool.start_prefixes:
                spaces = leading_whitespace(ctx.buf)
                opener = prefix_state(ctx.buf[spaces:], tool.start_prefixes)
                if opener:
                    # The whitespace stays for the handler: one that finds no call there gives
                    # the text back as content, whitespace included.
                    ctx.reasoning_pending = False
                    ctx.switch(tool.enter(opener))
                    return True
                if opener == "" and not final:
                    self.at_start = True
                    return False
        tags: list[str] = []
        if ctx.reasoning_pending and ctx.reasoning_format is not None:
            tags.append(ctx.reasoning_format.start_tag)
        if tool is not None:
            tags.extend(tool.start_tags)
            tags.extend(tool.content_drops)
        at, tag = find_tag(ctx.buf, tags, final)
        ctx.emit_content(ctx.consume(at))
        if tag is None:
            return at > 0
        ctx.consume(len(tag))
        if tool is not None and tag in tool.content_drops:
            return True
        ctx.reasoning_pending = False
        if ctx.reasoning_format is not None and tag == ctx.reasoning_format.start_tag:
            ctx.switch(ctx.reasoning_format.enter(implicit=False))
        else:
            ctx.switch(tool.enter(tag))
        return True


class StreamParser:
    """Turns the generated text, fed as it comes, into OpenAI chat-chunk ``delta`` objects."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._finished = False

    def feed(self, text: str) -> list[dict]:
        if self._finished:
            raise RuntimeError("feed() after finish()")
        self._ctx.buf += text
        run(self._ctx, final=False)
        return self._ctx.take_deltas()

    def finish(self) -> list[dict]:
        if not self._finished:
            self._finished = True
            run(self._ctx, final=True)
        return self._ctx.take_deltas()

    @property
    def tool_calls_seen(self) -> bool:
        """Whether a tool call has been announced: OVMS then reports finish_reason
        "tool_calls" where the generation itself stopped ("length" stays "length")."""
        return bool(self._ctx.calls)
