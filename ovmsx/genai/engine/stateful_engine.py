"""The stateful engine (OVMS's ``pipeline_type: LM``): openvino-genai's ``LLMPipeline``, which
keeps its KV cache in the model's state and so generates for one request at a time.

Requests queue in arrival order. While one generates, a streamer sees each new token: it turns
streamed tokens into text for the server, reads the socket for new requests (queued) and stops
(a stop of the running request cancels its generation at the next token), and sends what it has,
so a long generation never leaves the server unheard. The messages are those of
engine_process.py.
"""

from __future__ import annotations

import select
import socket
import time
from collections import deque

import numpy as np
import openvino as ov
import openvino_genai as genai

from ovmsx.genai.engine.engine_messages import EngineRequest
from ovmsx.genai.engine.engine_process import Engine, nothing_generated, resident_bytes
from ovmsx.genai.engine.text_decoder import TextDecoder
from ovmsx.genai.engine.wire import FrameReader, receive, send
from ovmsx.genai.genai_errors import genai_message


class StatefulEngine(Engine):
    def _build_pipeline(self):
        settings = self.settings
        return self.genai.LLMPipeline(settings.models_path, settings.device, settings.plugin_config)

    def serve(self, sock: socket.socket, reader: FrameReader) -> int:
        self._sock = sock
        self._reader = reader
        self._queue: deque[EngineRequest] = deque()
        self._closed = False
        while not self._closed:
            if not self._queue:
                select.select([sock.fileno()], [], [])
            if not self._take_messages(current=None):
                return 0
            if self._queue:
                request = self._queue.popleft()
                self._running = True
                send(sock, ("stats", self.stats()))
                self._run(request)
                self._running = False
                send(sock, ("stats", self.stats()))
        return 0

    def stats(self, idle: bool = False) -> dict:
        waiting = len(getattr(self, "_queue", ()))
        running = 1 if getattr(self, "_running", False) and not idle else 0
        return {
            "requests": running + waiting,
            "scheduled_requests": running,
            "cache_usage": 0.0,
            "rss_bytes": resident_bytes(),
        }

    # -- messages ----------------------------------------------------------------------------

    def _take_messages(self, current: _Run | None) -> bool:
        """Queue new requests, apply stops; False once the server is gone or closes."""
        messages = receive(self._sock, self._reader)
        if messages is None:
            self._closed = True
            return False
        for message in messages:
            kind = message[0]
            if kind == "add":
                self._queue.append(message[1])
            elif kind == "tokenize":
                events: list = []
                self.tokenize(message[1], message[2], events)
                send(self._sock, events)
            elif kind == "stop":
                if current is not None and current.request.id == message[1]:
                    current.stopped = True
                else:
                    self._queue = deque(r for r in self._queue if r.id != message[1])
            elif kind == "close":
                self._closed = True
                return False
        return True

    # -- one request -------------------------------------------------------------------------

    def _run(self, request: EngineRequest) -> None:
        try:
            ids, config = self.prepare(request)
        except RuntimeError as error:
            send(self._sock, [("error", request.id, genai_message(error))])
            return
        if ids is None:
            send(self._sock, [("error", request.id, config)])
            return
        problem = _unsupported(request, config)
        if problem:
            send(self._sock, [("error", request.id, problem)])
            return
        if request.max_tokens == 0:
            send(self._sock, nothing_generated(request, ids.shape[1]))
            return
        run = _Run(self, request)
        inputs = genai.TokenizedInputs(ids, ov.Tensor(np.ones(ids.shape, dtype=np.int64)))
        try:
            self.pipeline.generate(inputs, config, run)
        except RuntimeError as error:
            send(self._sock, [("error", request.id, genai_message(error))])
            return
        if run.stopped:
            return  # the client left: nothing more to say
        send(self._sock, run.final_events(ids.shape[1], config.max_new_tokens))


def _unsupported(request: EngineRequest, config) -> str | None:
    """What the stateful pipeline cannot do for a request (as on OVMS's stateful servables)."""
    if request.logprobs:
        return "logprobs are not supported by the stateful (LM) pipeline"
    if config.num_return_sequences > 1 or config.num_beams > 1:
        return (
            "the stateful (LM) pipeline generates one answer per request: n and best_of must be 1"
        )
    return None


class _Run(genai.StreamerBase):
    """The streamer of one generation (openvino-genai calls ``write`` per token)."""

    def __init__(self, engine: StatefulEngine, request: EngineRequest) -> None:
        super().__init__()
        self.engine = engine
        self.request = request
        self.decoder = TextDecoder()
        # Text from token bytes when the tokenizer allows it, as the batching engine streams.
        spelled = engine.byte_text if request.skip_special_tokens else None
        self.spelled = spelled
        self.stream = spelled.stream() if spelled is not None else None
        self.stopped = False
        self.first_token_at: float | None = None

    def write(self, token):
        if self.first_token_at is None:
            self.first_token_at = time.monotonic()
        tokens = token if isinstance(token, list) else [token]
        self.decoder.ids.extend(tokens)
        if self.request.stream:
            text = self._text(tokens, final=False)
            if text:
                send(self.engine._sock, [("text", self.request.id, (0, text, False, None))])
        if not self.engine._take_messages(current=self) or self.stopped:
            self.stopped = True
            return genai.StreamingStatus.CANCEL
        return genai.StreamingStatus.RUNNING

    def end(self) -> None:
        """Called once the generation ends; the final text goes out with the result."""

    def _text(self, tokens: list[int], final: bool) -> str:
        """The new text ``tokens`` complete (everything left when ``final``)."""
        if self.stream is not None:
            return self.stream.push(tokens, final)
        decoder = self.decoder
        skip = self.request.skip_special_tokens
        sent, whole = self.engine._decode(list(decoder.slices()), skip)
        return decoder.advance(sent, whole, final)

    def final_events(self, prompt_tokens: int, max_new_tokens: int) -> list:
        decoder = self.decoder
        count = len(decoder.ids)
        reason = "length" if count >= max_new_tokens else "stop"
        now = time.monotonic()
        timing = {"first_token_at": self.first_token_at or now, "last_token_at": now}
        if self.request.stream:
            text = self._text([], final=True)
            usage = {"choices": [{"index": 0, "finish_reason": reason}]}
            return [
                ("text", self.request.id, (0, text, True, reason)),
                ("done", self.request.id, {**usage, **self._usage(prompt_tokens), **timing}),
            ]
        tokenizer = self.engine.tokenizer
        choice = {
            "index": 0,
            "text": (
                self.spelled.text(decoder.ids)
                if self.spelled is not None
                else tokenizer.decode(
                    decoder.ids, skip_special_tokens=self.request.skip_special_tokens
                )
            ),
            "finish_reason": reason,
        }
        return [
            ("done", self.request.id, {"choices": [choice], **self._usage(prompt_tokens), **timing})
        ]

    def _usage(self, prompt_tokens: int) -> dict:
        return {"prompt_tokens": prompt_tokens, "completion_tokens": len(self.decoder.ids)}
