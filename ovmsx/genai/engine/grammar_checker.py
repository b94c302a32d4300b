"""Structured output checked before it reaches an LLM engine: bounded in size here, compiled
within a time limit in a process of its own (grammar_process.py).

A grammar is refused (HTTP 400, ``response_format cannot be followed: ...``) when its text is
over ``MAX_GRAMMAR_BYTES``, when it does not compile, or when compiling it took longer than
``compile_limit_s``: the engine compiles it again inside its step, and every stream on the LLM
waits while it does, so that time is what one request may cost the others. A compile still
running a second past that limit is killed, and the checker starts again for the next request.

Checks run one at a time, off the event loop; a grammar that passed is not checked again (the
last ``ACCEPTED_KEPT`` are remembered), so the many requests of one schema do not queue here.
When the checker cannot start (a tokenizer it cannot read on its own), the engine checks the
grammar itself as before (``EngineRequest.grammar_checked``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
from collections import OrderedDict

from ovmsx.child_python import python_command
from ovmsx.genai.engine.grammar_probe import FOLDER_PREFIX
from ovmsx.genai.engine.wire import FrameReader, pack

log = logging.getLogger("ovmsx.llm_calculator")

MAX_GRAMMAR_BYTES = 128 * 1024
COMPILE_LIMIT_S = float(os.environ.get("OVMSX_GRAMMAR_COMPILE_LIMIT_S", "1.0"))
# A compile that runs this long past the limit is refused anyway: stop it then, so that one
# request holds the checker for a bounded time.
HARD_TIMEOUT_MARGIN_S = 1.0
ACCEPTED_KEPT = 256
_START_TIMEOUT_S = 60.0


class GrammarUnchecked(Exception):
    """The checker is not available: the engine must check the grammar itself."""


class _CheckerGone(Exception):
    """The checker process ended (its socket closed) before it answered."""


class GrammarChecker:
    def __init__(
        self,
        models_path: str,
        compile_limit_s: float = COMPILE_LIMIT_S,
    ) -> None:
        self.models_path = models_path
        self.compile_limit_s = compile_limit_s
        self.hard_timeout_s = compile_limit_s + HARD_TIMEOUT_MARGIN_S
        self._lock = asyncio.Lock()
        self._thread_lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._unusable: str | None = None
        self._accepted: OrderedDict[tuple, None] = OrderedDict()
        """Grammars that passed, most recent last (the engine's compiler caches them too)."""
        self._folder: str | None = None
        """The probe model's folder, which a killed checker cannot remove itself."""

    async def problem(self, structured: dict) -> str | None:
        """Why ``structured`` (``StructuredOutputConfig`` keyword arguments) cannot be served,
        or None. Raises ``GrammarUnchecked`` when the checker cannot run."""
        size = sum(len(value) for value in structured.values() if isinstance(value, str))
        if size > MAX_GRAMMAR_BYTES:
            return f"its grammar is {size} bytes long, more than the {MAX_GRAMMAR_BYTES} served"
        key = tuple(sorted(structured.items()))
        if key in self._accepted:  # the same schema every request: checked once
            self._accepted.move_to_end(key)
            return None
        async with self._lock:
            loop = asyncio.get_running_loop()
            problem = await loop.run_in_executor(None, self._check, structured)
        if problem is None:
            self._accepted[key] = None
            if len(self._accepted) > ACCEPTED_KEPT:
                self._accepted.popitem(last=False)
        return problem

    def _check(self, structured: dict) -> str | None:
        with self._thread_lock:
            try:
                answer = self._compiled(structured)
            except _CheckerGone:
                # It died (killed from outside, or between two requests): a new one gets the
                # grammar once more; a grammar that takes the checker down twice is refused.
                self._stop()
                try:
                    answer = self._compiled(structured)
                except _CheckerGone:
                    self._stop()
                    return "compiling its grammar stopped the grammar checker"
            if answer is None:
                self._stop()
                return (
                    f"compiling its grammar took longer than {self.hard_timeout_s:g} s "
                    f"(the limit is {self.compile_limit_s:g} s)"
                )
            problem, seconds = answer
            if problem is not None:
                return problem
            if seconds > self.compile_limit_s:
                return (
                    f"compiling its grammar took {seconds:.2f} s, longer than the limit of "
                    f"{self.compile_limit_s:g} s"
                )
            return None

    def _compiled(self, structured: dict):
        """The checker's answer for ``structured``, None past the hard timeout."""
        sock = self._started()
        try:
            sock.sendall(pack(structured))
        except OSError:
            raise _CheckerGone from None
        return self._answer(sock, self.hard_timeout_s)

    def _started(self) -> socket.socket:
        if self._unusable is not None:
            raise GrammarUnchecked(self._unusable)
        if self._sock is not None and self._process is not None and self._process.poll() is None:
            return self._sock
        self._stop()
        self._folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX)
        ours, theirs = socket.socketpair()
        try:
            command = python_command(
                "ovmsx.genai.engine.grammar_process",
                "main",
                str(theirs.fileno()),
                self.models_path,
                self._folder,
            )
            self._process = subprocess.Popen(
                command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL
            )
        finally:
            theirs.close()
        self._sock = ours
        try:
            answer = self._answer(ours, _START_TIMEOUT_S)
        except _CheckerGone:
            answer = None
        if answer is None or answer[0] != "ready":
            reason = answer[1] if answer is not None and len(answer) > 1 else "no answer"
            self._stop()
            self._unusable = f"the grammar checker of {self.models_path} cannot start: {reason}"
            log.warning("%s; the LLM engine checks grammars itself", self._unusable)
            raise GrammarUnchecked(self._unusable)
        return ours

    @staticmethod
    def _answer(sock: socket.socket, timeout_s: float):
        """The next message, or None when none came within ``timeout_s``; ``_CheckerGone``
        when the process died."""
        reader = FrameReader()
        while True:
            ready, _, _ = select.select([sock], [], [], timeout_s)
            if not ready:
                return None
            try:
                data = sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                raise _CheckerGone
            messages = reader.feed(data)
            if messages:
                return messages[0]

    def _stop(self) -> None:
        sock, self._sock = self._sock, None
        process, self._process = self._process, None
        if sock is not None:
            sock.close()
        if process is not None:
            process.kill()
            process.wait()
        folder, self._folder = self._folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        with self._thread_lock:
            self._stop()
