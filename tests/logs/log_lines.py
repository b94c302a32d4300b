"""Reading ovmsx's log: OVMS's line format, and a config that makes known lines at each level."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import serving_models as sm
from serving_process import write_config

# spdlog's pattern in OVMS: [%Y-%m-%d %T.%e][%t][%n][%l][%s:%#] %v
LINE = re.compile(
    r"\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\]"
    r"\[(?P<thread>\d+)\]"
    r"\[(?P<logger>[^\]]+)\]"
    r"\[(?P<level>trace|debug|info|warning|error|critical)\]"
    r"\[(?P<file>[\w.-]+):(?P<line>\d+)\] "
    r"(?P<message>.*)"
)
# Each --log_level and the level names it lets through.
SHOWN = {
    "TRACE": {"trace", "debug", "info", "warning", "error", "critical"},
    "DEBUG": {"debug", "info", "warning", "error", "critical"},
    "INFO": {"info", "warning", "error", "critical"},
    "WARNING": {"warning", "error", "critical"},
    "ERROR": {"error", "critical"},
}
# A flag that makes a warning at start.
WARNING_FLAG = ("--grpc_max_threads", "4")


@dataclass(frozen=True)
class Line:
    time: str
    thread: int
    logger: str
    level: str
    file: str
    line: int
    message: str


def parse(text: str) -> list[Line]:
    """Every line of ``text`` as a log line; fails naming the first one that is not."""
    lines = []
    for raw in text.splitlines():
        found = LINE.fullmatch(raw)
        assert found, f"not a log line in OVMS's format: {raw!r}\n{text}"
        fields = found.groupdict()
        lines.append(
            Line(
                fields["time"],
                int(fields["thread"]),
                fields["logger"],
                fields["level"],
                fields["file"],
                int(fields["line"]),
                fields["message"],
            )
        )
    return lines


def config(root: Path) -> Path:
    """A model that loads (info lines) and one that cannot (an error line)."""
    sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "add_one")
    (root / "broken").mkdir()
    return write_config(
        root / "config.json",
        [
            {"name": "add_one", "base_path": str(root / "add_one")},
            {"name": "broken", "base_path": str(root / "broken")},
        ],
    )
