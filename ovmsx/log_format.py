"""Log lines in OVMS's format, on stdout and optionally in a file.

OVMS logs through spdlog with the pattern ``[%Y-%m-%d %T.%e][%t][%n][%l][%s:%#] %v``::

    [2024-05-02 10:11:12.345][4242][serving][info][server.py:97] Started gRPC server on port 9000

date and local time with milliseconds, the OS thread id, the logger name, spdlog's lower-case
level name, the source file and line, the message. ovmsx writes the same fields, so log parsers
and alerting rules written for OVMS keep working. Python loggers keep their names in the code
(``ovmsx.models``, ...); ``OVMS_LOGGERS`` maps them to the logger names OVMS uses.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

# OVMS's TRACE is below DEBUG; Python has no such level, so it gets one.
TRACE = 5
logging.addLevelName(TRACE, "TRACE")

# ``--log_level`` values (OVMS's, in its order) -> Python levels.
LEVELS = {
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARNING": logging.WARNING,
    "ERROR": logging.ERROR,
}

# spdlog's level names, lower case as OVMS prints them.
_SPDLOG_LEVELS = (
    (logging.CRITICAL, "critical"),
    (logging.ERROR, "error"),
    (logging.WARNING, "warning"),
    (logging.INFO, "info"),
    (logging.DEBUG, "debug"),
    (TRACE, "trace"),
)

# Python logger (and its children) -> OVMS logger name, most specific first. Loggers outside
# ovmsx (a Python node's own logger, say) keep their names; the root logger is ``serving``.
OVMS_LOGGERS = (
    ("ovmsx.pipeline", "dag_executor"),  # DAG pipeline runs
    ("ovmsx.graph", "mediapipe"),  # graph scheduler and calculators
    ("ovmsx.graphs", "mediapipe"),  # graph servables: loading, retiring
    ("ovmsx.models", "modelmanager"),  # models and versions: loading, states
    ("ovmsx.servables", "modelmanager"),
    ("ovmsx.config", "modelmanager"),  # config files and flags
    ("ovmsx.llm_executor", "llm_executor"),  # an LLM engine process's loop
    ("ovmsx.llm_calculator", "llm_calculator"),  # LLM servables and their requests
    ("ovmsx", "serving"),  # server, frontends, workers, everything else
)


def ovms_logger(name: str) -> str:
    """The OVMS logger name for Python logger ``name``."""
    for prefix, ovms_name in OVMS_LOGGERS:
        if name == prefix or name.startswith(prefix + "."):
            return ovms_name
    return "serving" if name == "root" else name


def spdlog_level(levelno: int) -> str:
    """spdlog's name for a Python level (a level between two takes the lower one's name)."""
    for threshold, name in _SPDLOG_LEVELS:
        if levelno >= threshold:
            return name
    return "trace"


class OvmsFormatter(logging.Formatter):
    """``[date time.ms][thread id][logger][level][file:line] message``.

    ``process`` (``--grpc_workers``: which of the processes writing to one log this is) comes
    first in the message, so that every field keeps OVMS's place and meaning.
    """

    def __init__(self, process: str = "") -> None:
        super().__init__()
        self._process = f"[{process}] " if process else ""

    def format(self, record: logging.LogRecord) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created))
        thread = getattr(record, "native_thread_id", None) or threading.get_native_id()
        line = (
            f"[{when}.{int(record.msecs):03d}][{thread}][{ovms_logger(record.name)}]"
            f"[{spdlog_level(record.levelno)}][{record.filename}:{record.lineno}] "
            f"{self._process}{record.getMessage()}"
        )
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line += "\n" + record.exc_text
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


class HeldRecords(logging.Handler):
    """Holds the records logged in a ``with`` block (warnings about flags, logged while the
    flags that say where and how to log are parsed), for ``configure`` to write like any
    other line. If the block raises (a usage error), they go to stderr at once, since the
    log will not be set up."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        # Formatted later, maybe on another thread: note whose record this is now.
        record.native_thread_id = threading.get_native_id()
        self.records.append(record)

    def __enter__(self) -> HeldRecords:
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        logging.getLogger().removeHandler(self)
        if kind is not None and self.records:
            stderr = logging.StreamHandler(sys.stderr)
            stderr.setFormatter(OvmsFormatter())
            for record in self.records:
                stderr.handle(record)


def configure(
    level: str,
    log_path: Path | None = None,
    process: str = "",
    held: Sequence[logging.LogRecord] = (),
) -> None:
    """Send every log record at ``level`` (an ``LEVELS`` key) or above to stdout, and to
    ``log_path`` too when given (appended to, as spdlog's file sink does); then write the
    ``held`` records (see ``HeldRecords``).

    Raises ``OSError`` when ``log_path`` cannot be opened.
    """
    formatter = OvmsFormatter(process)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stdout)]
    if log_path is not None:
        handlers.append(logging.FileHandler(log_path, encoding="utf-8"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.setLevel(LEVELS[level])
    for record in held:
        if record.levelno >= root.level:
            root.handle(record)
