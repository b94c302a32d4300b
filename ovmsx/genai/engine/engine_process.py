"""The LLM engine: a process of its own running openvino-genai for one ``HttpLLMCalculator``.

openvino-genai's ``step()`` and ``add_request()`` hold the GIL for a whole forward pass, and a
blocked ``GenerationHandle.read()`` holds it too, so the engine never runs in the interpreter
that serves requests: the server starts this module as a child process (engine_client.py) and
talks to it over a socket pair (wire.py).

The process runs one loop on one thread: take what the server sent (new requests, stops), run
one ``step()``, collect what every request produced, and send it back in one frame. With no
request in the engine it sleeps on the socket. Prompts are tokenized here (the tokenizer holds
the GIL too), their length checked before they reach the pipeline (a ``step()`` that fails
breaks the pipeline for good), and streamed tokens are turned into text here, batched across
requests (text_decoder.py).

Messages from the server: ``("add", EngineRequest)``, ``("stop", id)``, ``("close",)``.
To the server: ``("ready", EngineInfo)`` once, then lists of events, each ``(kind, id, data)``:
``text`` (a streamed delta: sequence index, text, whether it is the sequence's last, its
finish reason), ``done`` (the final result), ``error`` (the request failed);
``("stats", {...})`` now and then; ``("fatal", message)`` before exiting on a broken pipeline.
"""

from __future__ import annotations

import functools
import logging
import os
import select
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ovmsx.genai.engine.byte_level_text import ByteLevelText, StreamedText
from ovmsx.genai.engine.continuous_batching import continuous_batching_pipeline
from ovmsx.genai.engine.engine_messages import EngineInfo, EngineRequest
from ovmsx.genai.engine.engine_settings import EngineSettings
from ovmsx.genai.engine.generation_config import UNSET, request_config
from ovmsx.genai.engine.grammar_probe import GrammarProbe
from ovmsx.genai.engine.text_decoder import TextDecoder, decode_steps
from ovmsx.genai.engine.wire import FrameReader, pack, receive, send
from ovmsx.genai.genai_errors import genai_message
from ovmsx.genai.model_folder import max_model_length
from ovmsx.genai.openai.tokenize_request import tokenize_rows

log = logging.getLogger("ovmsx.llm_executor")

# OVMS logs the scheduler's state every this many steps.
STATS_EVERY_STEPS = 10
# OVMS's defaults for assisted (speculative, prompt-lookup) decoding.
ASSISTANT_TOKENS = 5
ASSISTED_FIELDS = ("num_assistant_tokens", "assistant_confidence_threshold", "max_ngram_size")
PROMPT_LOOKUP_NGRAM = 3
# The engine's niceness above the server's (OVMSX_ENGINE_NICE overrides it).
ENGINE_NICE = 0
# How often a busy engine reports its scheduler's state (requests running and waiting, KV cache
# use) to the server's metrics; an engine going idle reports at once.
STATS_PERIOD_S = 0.25
_FINISH_REASONS = {1: "stop", 2: "length", 3: "tool_calls"}


@dataclass
class _Active:
    request: EngineRequest
    handle: object
    prompt_tokens: int
    decoders: dict[int, TextDecoder] = field(default_factory=dict)
    streams: dict[int, StreamedText] = field(default_factory=dict)
    """Byte-level text of each streamed sequence, when the tokenizer allows it."""
    finish: dict[int, str | None] = field(default_factory=dict)
    first_token_at: float | None = None
    """time.monotonic() of the step that produced its first token (the clock is the server's
    too: CLOCK_MONOTONIC is system-wide)."""


class Engine:
    """The pipeline, its tokenizer and the requests in it."""

    def __init__(self, settings: EngineSettings) -> None:
        import openvino_genai as genai

        self.genai = genai
        self.settings = settings
        started = time.perf_counter()
        path = settings.models_path
        self.pipeline = self._build_pipeline()
        self.tokenizer = self.pipeline.get_tokenizer()
        self.byte_text = _byte_level_text(self.tokenizer)
        self.base_fields = _config_fields(self._base_config(path))
        self.load_seconds = time.perf_counter() - started
        folder = Path(path) if os.path.isdir(path) else Path(path).parent
        self.max_length = max_model_length(folder)
        self.active: dict[int, _Active] = {}
        self.steps = 0
        self._probe: GrammarProbe | None = None  # built for the first structured request

    def _build_pipeline(self):
        return continuous_batching_pipeline(self.genai, self.settings)

    def info(self) -> EngineInfo:
        tokenizer = self.tokenizer
        return EngineInfo(
            pid=os.getpid(),
            max_model_length=self.max_length,
            chat_template=tokenizer.get_original_chat_template() or tokenizer.chat_template,
            bos_token=tokenizer.get_bos_token(),
            eos_token=tokenizer.get_eos_token(),
            load_seconds=self.load_seconds,
        )

    # -- requests --------------------------------------------------------------------------

    def add(self, request: EngineRequest, events: list) -> None:
        try:
            ids, config = self.prepare(request)
            if ids is None:
                events.append(("error", request.id, config))
                return
            if request.max_tokens == 0 and not config.echo:  # echo alone: nothing to run
                events.extend(nothing_generated(request, ids.shape[1]))
                return
            handle = self.pipeline.add_request(request.id, ids, config)
        except RuntimeError as error:  # GenerationConfig.validate() and add_request's checks
            events.append(("error", request.id, genai_message(error)))
            return
        self.active[request.id] = _Active(request, handle, ids.shape[1])

    def prepare(self, request: EngineRequest):
        """(prompt ids, GenerationConfig), or (None, why the prompt is refused)."""
        ids = self.tokenizer.encode(
            request.prompt, add_special_tokens=request.add_special_tokens
        ).input_ids
        problem = self._length_problem(ids.shape[1], request.max_tokens)
        if problem:
            return None, problem
        config = self._config(request)
        if config.num_beams > 1 and config.stop_strings:
            # Beam search breaks the pipeline when a stop string matches (the request's are
            # refused at parsing; these came from generation_config.json).
            return None, "stop strings cannot be used with beam search (best_of greater than 1)"
        if config.structured_output_config is not None and not request.grammar_checked:
            if self._probe is None:
                self._probe = GrammarProbe(self.genai, self.tokenizer)
            problem = self._probe.problem(config.structured_output_config)
            if problem:
                return None, f"response_format cannot be followed: {problem}"
        return ids, config

    def tokenize(self, request_id: int, request, events: list) -> None:
        """``POST /v3/tokenize``: the ids of each text (tokenize_request.tokenize_rows)."""
        try:
            rows = tokenize_rows(self.tokenizer, request)
        except RuntimeError as error:
            events.append(("error", request_id, genai_message(error)))
            return
        events.append(("done", request_id, {"rows": rows}))

    def stop(self, request_id: int) -> None:
        """The client left: stop its generation; the next step frees its KV cache."""
        active = self.active.pop(request_id, None)
        if active is not None:
            active.handle.stop()

    def _length_problem(self, prompt: int, max_tokens: int | None) -> str | None:
        limit = self.max_length
        settings = self.settings
        if limit is not None:
            if prompt > limit:
                return f"Number of prompt tokens: {prompt} exceeds model max length: {limit}"
            if max_tokens is not None and prompt + max_tokens > limit:
                return (
                    f"Number of prompt tokens: {prompt} + max tokens value: {max_tokens} "
                    f"exceeds model max length: {limit}"
                )
        if not settings.dynamic_split_fuse and prompt > settings.max_num_batched_tokens:
            return (
                "Input length exceeds pipeline capabilities: "
                f"{prompt} > {settings.max_num_batched_tokens}"
            )
        return None

    def _base_config(self, path: str):
        """generation_config.json's settings (OVMS reads it once), else openvino-genai's."""
        folder = Path(path) if os.path.isdir(path) else Path(path).parent
        json_path = folder / "generation_config.json"
        if json_path.is_file():
            return self.genai.GenerationConfig(str(json_path))
        return self.genai.GenerationConfig()

    def _config(self, request: EngineRequest):
        fields = request_config(self.base_fields, request.config, self.max_length)
        structured = fields.pop("structured_output", None)
        # OVMS's defaults for assisted decoding when the request sets neither knob.
        assisted = self.settings.draft is not None or self.settings.prompt_lookup
        if not assisted:
            # Without a draft model or prompt lookup these knobs mean nothing, and some make
            # openvino-genai take the pipeline for an assisted one, whose step then throws.
            for name in ASSISTED_FIELDS:
                fields.pop(name, None)
        unset = fields.get("num_assistant_tokens") is None
        if assisted and unset and not fields.get("assistant_confidence_threshold"):
            fields["num_assistant_tokens"] = ASSISTANT_TOKENS
        if self.settings.prompt_lookup and not fields.get("max_ngram_size"):
            fields["max_ngram_size"] = PROMPT_LOOKUP_NGRAM
        config = self.genai.GenerationConfig()
        for name, value in fields.items():
            # The keyword constructor takes signed longs; "unset" is the largest size_t,
            # which is each such field's default anyway.
            if value != UNSET:
                setattr(config, name, value)
        # openvino-genai's echo returns the prompt's tokens and their log probabilities before
        # the generated ones; only logprobs need it (the server echoes the prompt's text).
        config.echo = request.echo and request.logprobs
        if structured is not None:
            config.structured_output_config = self.genai.StructuredOutputConfig(**structured)
        return config

    # -- stepping --------------------------------------------------------------------------

    def step(self) -> None:
        if self.pipeline.has_non_finished_requests():
            self.pipeline.step()
            self.steps += 1

    def collect(self, events: list) -> None:
        """What every request produced in the last step: text deltas of streamed requests,
        the whole result of finished ones."""
        moved: list[tuple[TextDecoder, bool]] = []
        owners: list[tuple[int, int]] = []
        finished: list[_Active] = []
        running = self.genai.GenerationStatus.RUNNING
        now = time.monotonic()
        for request_id, active in self.active.items():
            handle = active.handle
            if active.first_token_at is None and handle.can_read():
                active.first_token_at = now
            if active.request.stream:
                fresh: dict[int, list[int]] = {}
                while handle.can_read():
                    for index, output in handle.read().items():
                        fresh.setdefault(index, []).extend(output.generated_ids)
                        reason = _FINISH_REASONS.get(int(output.finish_reason))
                        if reason is not None:
                            active.finish[index] = reason
                final = handle.get_status() != running and not handle.can_read()
                if final:
                    finished.append(active)
                for index, ids in fresh.items():
                    active.decoders.setdefault(index, TextDecoder()).ids.extend(ids)
                if self.byte_text is not None and active.request.skip_special_tokens:
                    self._spell(active, fresh, final, events)
                    continue
                for index, decoder in active.decoders.items():
                    if final or decoder.read < len(decoder.ids):
                        moved.append((decoder, final))
                        owners.append((request_id, index))
            elif handle.get_status() != running:
                finished.append(active)
        if moved:
            texts = self._decode_moved(moved, owners)
            for (request_id, index), (_, final), text in zip(owners, moved, texts, strict=True):
                # The last text of a sequence carries its finish reason, as OpenAI streams it.
                reason = self.active[request_id].finish.get(index) if final else None
                events.append(("text", request_id, (index, text, final, reason)))
        for active in finished:
            del self.active[active.request.id]
            result = self._result(active)
            result["first_token_at"] = active.first_token_at or now
            result["last_token_at"] = now
            events.append(("done", active.request.id, result))

    def _spell(self, active: _Active, fresh: dict[int, list[int]], final: bool, events) -> None:
        """The new text of a streamed request from its tokens' bytes (byte_level_text.py)."""
        streams = active.streams
        for index in active.decoders:
            new = fresh.get(index, ())
            if not new and not final:
                continue
            stream = streams.get(index)
            if stream is None:
                stream = streams[index] = self.byte_text.stream()
            text = stream.push(new, final)
            if text or final:
                reason = active.finish.get(index) if final else None
                events.append(("text", active.request.id, (index, text, final, reason)))

    def _decode_moved(self, moved: list, owners: list[tuple[int, int]]) -> list[str]:
        """The new text of each moved sequence: one detokenizer call for the requests that skip
        special tokens (nearly all), one for those that keep them."""
        texts = [""] * len(moved)
        for skip in (True, False):
            picked = [
                i
                for i, (request_id, _) in enumerate(owners)
                if self.active[request_id].request.skip_special_tokens is skip
            ]
            if picked:
                decode = functools.partial(self._decode, skip=skip)
                for i, text in zip(
                    picked, decode_steps(decode, [moved[i] for i in picked]), strict=True
                ):
                    texts[i] = text
        return texts

    def _decode(self, batch: list[list[int]], skip: bool = True) -> list[str]:
        if skip:
            return self.tokenizer.decode(batch, skip_special_tokens=True)
        # A batch is padded with the pad token, which only skipping special tokens removes.
        return [self.tokenizer.decode(ids, skip_special_tokens=False) for ids in batch]

    def _result(self, active: _Active) -> dict:
        status = active.handle.get_status()
        if status == self.genai.GenerationStatus.IGNORED:
            return {"error": "the request was dropped: the KV cache is full"}
        if active.request.stream:
            choices = [
                {"index": index, "finish_reason": active.finish.get(index)}
                for index in sorted(active.decoders)
            ]
            completion = sum(len(decoder.ids) for decoder in active.decoders.values())
            return _usage(choices, active.prompt_tokens, completion)
        outputs = active.handle.read_all()
        choices = []
        completion = 0
        echoed = active.prompt_tokens if active.request.echo and active.request.logprobs else 0
        for index, output in enumerate(outputs):
            scored = list(output.generated_ids)
            ids = scored[echoed:]
            completion += len(ids)
            skip = active.request.skip_special_tokens
            if skip and self.byte_text is not None:
                text = self.byte_text.text(ids)
            else:
                text = self.tokenizer.decode(ids, skip_special_tokens=skip)
            choice = {
                "index": index,
                "text": text,
                "finish_reason": _FINISH_REASONS.get(int(output.finish_reason)),
            }
            if active.request.logprobs:
                choice["tokens"] = [
                    self.tokenizer.decode([i], skip_special_tokens=False) for i in scored
                ]
                choice["logprobs"] = list(output.generated_log_probs)
                choice["echoed"] = bool(echoed)
            choices.append(choice)
        return _usage(choices, active.prompt_tokens, completion)

    def stats(self, idle: bool = False) -> dict:
        """The scheduler's state; ``idle``: no request is left (the pipeline's own counts are
        those of its last step, taken before the last requests left)."""
        metrics = self.pipeline.get_metrics()
        return {
            "requests": 0 if idle else metrics.requests,
            "scheduled_requests": 0 if idle else metrics.scheduled_requests,
            "cache_usage": metrics.cache_usage,
            "kv_cache_bytes": metrics.kv_cache_size_in_bytes,
            "rss_bytes": resident_bytes(),
        }


# GenerationConfig attributes a request config starts from (what generation_config.json sets).
_BASE_FIELDS = (
    "max_new_tokens", "max_length", "min_new_tokens", "ignore_eos", "eos_token_id",
    "stop_token_ids", "stop_strings", "include_stop_str_in_output", "num_beams",
    "num_beam_groups", "diversity_penalty", "length_penalty", "no_repeat_ngram_size",
    "num_return_sequences", "do_sample", "temperature", "top_p", "top_k", "min_p",
    "repetition_penalty", "presence_penalty", "frequency_penalty", "logprobs",
    "num_assistant_tokens", "assistant_confidence_threshold", "max_ngram_size",
)  # fmt: skip


_PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> int:
    """This process's resident memory (for --engine_max_rss)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except OSError:
        return 0


def _config_fields(config) -> dict:
    return {name: getattr(config, name) for name in _BASE_FIELDS}


def _byte_level_text(tokenizer) -> ByteLevelText | None:
    """Text from token bytes when the tokenizer is byte-level BPE (byte_level_text.py)."""
    try:
        found = ByteLevelText.of(tokenizer)
    except Exception:  # any surprise keeps the detokenizer model
        log.debug("byte-level text unavailable", exc_info=True)
        return None
    log.info("Streaming text from token bytes" if found else "Streaming text with the detokenizer")
    return found


def nothing_generated(request: EngineRequest, prompt_tokens: int) -> list:
    """The events of a request asking for no new token (``echo`` with ``max_tokens: 0``)."""
    now = time.monotonic()
    result = _usage([{"index": 0, "text": "", "finish_reason": "length"}], prompt_tokens, 0)
    result.update(first_token_at=now, last_token_at=now)
    if not request.stream:
        return [("done", request.id, result)]
    return [("text", request.id, (0, "", True, "length")), ("done", request.id, result)]


def _usage(choices: list, prompt: int, completion: int) -> dict:
    return {"choices": choices, "prompt_tokens": prompt, "completion_tokens": completion}


def serve(sock: socket.socket, settings: EngineSettings) -> int:
    reader = FrameReader()
    stateful = settings.pipeline == "LM"
    kind = "Legacy" if stateful else "Continuous Batching"
    log.info("Initializing Language Model %s servable: %s", kind, settings.models_path)
    try:
        if stateful:
            from ovmsx.genai.engine.stateful_engine import StatefulEngine

            engine = StatefulEngine(settings)
        else:
            engine = Engine(settings)
    except Exception as error:
        # Without build paths: the reason reaches the client and the log (genai_errors).
        sock.sendall(pack(("failed", f"{type(error).__name__}: {genai_message(error)}")))
        return 2
    sock.sendall(pack(("ready", engine.info())))
    sock.setblocking(False)
    if stateful:
        return engine.serve(sock, reader)
    fd = sock.fileno()
    was_busy = False
    last_stats = 0.0
    while True:
        busy = bool(engine.active) or engine.pipeline.has_non_finished_requests()
        now = time.monotonic()
        if (busy and now - last_stats > STATS_PERIOD_S) or (was_busy and not busy):
            send(sock, ("stats", engine.stats(idle=not busy)))
            last_stats = now
        was_busy = busy
        if not busy:
            select.select([fd], [], [])
        messages = receive(sock, reader)
        if messages is None:
            return 0  # the server is gone
        events: list = []
        for message in messages:
            kind = message[0]
            if kind == "add":
                engine.add(message[1], events)
            elif kind == "tokenize":
                engine.tokenize(message[1], message[2], events)
            elif kind == "stop":
                engine.stop(message[1])
            elif kind == "close":
                return 0
        try:
            engine.step()
        except Exception as error:
            send(sock, ("fatal", f"generation failed: {genai_message(error)}"))
            return 3
        engine.collect(events)
        if engine.steps % STATS_EVERY_STEPS == 0 and engine.steps and (engine.active or events):
            _log_state(engine)
        if events:
            send(sock, events)


def _log_state(engine: Engine) -> None:
    stats = engine.stats()
    cache = "dynamic" if engine.settings.cache_size == 0 else "static"
    log.info(
        "All requests: %d; Scheduled requests: %d; Cache type: %s, cache usage: %.1f%% of %d;",
        stats["requests"],
        stats["scheduled_requests"],
        cache,
        stats["cache_usage"],
        stats["kv_cache_bytes"],
    )


def main(argv: list[str] | None = None) -> int:
    """The engine process's entry (``python_command(__name__, "main", FD)``): serve on the
    inherited socket ``FD``; the first frame on it is the ``EngineSettings``."""
    argv = sys.argv if argv is None else argv
    sock = socket.socket(fileno=int(argv[1]))
    reader = FrameReader()
    settings = None
    while settings is None:
        data = sock.recv(1 << 16)
        if not data:
            return 1
        for message in reader.feed(data):
            settings = message
    from ovmsx.log_format import configure

    configure(settings.log_level, Path(settings.log_path) if settings.log_path else None)
    # Below the server in the scheduler's eyes: when cores are short, the process answering
    # requests (KServe ones, and this engine's own streams) runs first.
    os.nice(int(os.environ.get("OVMSX_ENGINE_NICE", str(ENGINE_NICE))))
    return serve(sock, settings)


if __name__ == "__main__":
    sys.exit(main())
