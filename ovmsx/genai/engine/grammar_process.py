"""The grammar checker: a process of its own that compiles each structured request's grammar
before the LLM engine sees it (grammar_checker.py starts it and talks to it).

openvino-genai compiles a request's grammar inside the engine's ``step()``, which holds the
engine for as long as compiling takes (a 10,000-property schema held every stream of an LLM for
15 s), and a grammar it cannot compile breaks the pipeline. Here the grammar goes through
``GrammarProbe`` (the same compiler over the model's own vocabulary) and the answer says whether
it compiled and how long that took, so the server refuses what would fail or stall the engine.

Messages in: the ``StructuredOutputConfig`` keyword arguments of one request; out: ``("ready",)``
once, then ``(problem or None, seconds)`` per request. The process holds one request at a time.
"""

from __future__ import annotations

import socket
import sys
import time

from ovmsx.genai.engine.grammar_probe import GrammarProbe
from ovmsx.genai.engine.wire import FrameReader, pack


def serve(sock: socket.socket, models_path: str, folder: str) -> int:
    try:
        import openvino_genai as genai

        probe = GrammarProbe(genai, genai.Tokenizer(models_path), folder)
    except Exception as error:
        sock.sendall(pack(("failed", f"{type(error).__name__}: {error}")))
        return 2
    sock.sendall(pack(("ready",)))
    reader = FrameReader()
    while True:
        data = sock.recv(1 << 20)
        if not data:
            return 0
        for structured in reader.feed(data):
            started = time.perf_counter()
            problem = probe.problem(genai.StructuredOutputConfig(**structured))
            sock.sendall(pack((problem, time.perf_counter() - started)))


def main(argv: list[str] | None = None) -> int:
    """``python_command(__name__, "main", FD, MODELS_PATH, PROBE_FOLDER)``."""
    argv = sys.argv if argv is None else argv
    return serve(socket.socket(fileno=int(argv[1])), argv[2], argv[3])


if __name__ == "__main__":
    sys.exit(main())
