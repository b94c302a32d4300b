"""The test nodes' bookkeeping (``nodes/counting.h``), read through ctypes.

ctypes dlopens the same path as the server did and so shares the loaded library, counters
and all. Counters are global to a library; tests compare them before and after.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class Counts:
    """The counters of ``nodes/counting.h``, in its order."""

    allocated: int = 0
    released: int = 0
    bad_releases: int = 0
    bad_managers: int = 0
    initialized: int = 0
    deinitialized: int = 0
    live_at_deinit: int = 0

    def __sub__(self, other: Counts) -> Counts:
        return Counts(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))


class TestNode:
    """A compiled test node: its path, and its counters as they stand."""

    __test__ = False  # a helper, not a test class

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cdll = ctypes.CDLL(str(path))
        self.cdll.counters.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        self.cdll.counters.restype = None

    def counts(self) -> Counts:
        values = (ctypes.c_uint64 * len(fields(Counts)))()
        self.cdll.counters(values)
        return Counts(*values)


def assert_balanced(delta: Counts) -> None:
    """Every pointer handed out came back exactly once, each with its own manager."""
    assert delta.released == delta.allocated, delta
    assert (delta.bad_releases, delta.bad_managers, delta.live_at_deinit) == (0, 0, 0), delta


def resident_bytes() -> int:
    """This process's resident set size (/proc/self/statm counts pages)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
