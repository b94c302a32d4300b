"""Memory of a server and all its processes (Triton's Python stubs, KServe's and MLServer's
workers), read from Linux /proc.

RSS counts pages shared between the processes (libraries, Python itself) once per process, so a
server made of several processes looks bigger than it is; PSS shares each such page among the
processes that map it, and sums to what the server as a whole costs.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (/proc/<pid>/stat field 4 is the parent's id)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The command name (field 2) may hold spaces and parentheses: split after its ")".
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def rss_bytes(pids: Iterable[int]) -> int:
    """Sum of the processes' resident set sizes (/proc/<pid>/statm field 2, in pages)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):  # exited: it holds no memory any more
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    return total


def pss_bytes(pids: Iterable[int]) -> int:
    """Sum of the processes' proportional set sizes (/proc/<pid>/smaps_rollup, in kB)."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            pass
    return total


class PeakRss:
    """Samples the RSS of a process tree on a thread while the ``with`` block runs.

    The tree is read once on entry: the servers measured here start all their processes at load.
    Sampling every ``interval_s`` can miss a peak shorter than that; statm reads are cheap, so
    the sampler costs the measured run little CPU.
    """

    def __init__(self, pid: int, interval_s: float = 0.05) -> None:
        self.pids = process_tree(pid)
        self.interval_s = interval_s
        self.peak = rss_bytes(self.pids)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak = max(self.peak, rss_bytes(self.pids))

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes(self.pids))
