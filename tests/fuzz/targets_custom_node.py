"""The custom-node output validation (csrc/core/custom_node_results.cpp), fed hostile outputs.

``node_fuzz_outputs.c`` builds its outputs from its input's bytes; it is compiled here against
the header the wheel ships, loaded and initialized as the server does for a pipeline, and
called through ``CustomNodeCaller``, the pipelines' own call path. Each output that passes is
read whole (so a view over memory the node does not own would show), and after each call every
pointer the node handed out must have come back (counting.h keeps the count).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
from fuzz_contract import Finding

import ovmsx.custom_nodes
from ovmsx import _core
from ovmsx.pipeline.custom_call import CustomNodeCaller
from ovmsx.status import StatusError

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "node_fuzz_outputs.c"
# counting.h, shared with the custom-node tests: it records every pointer handed out.
COUNTING = HERE.parent / "custom_nodes" / "nodes"
ALLOCATED, RELEASED, BAD_RELEASES, BAD_MANAGERS = range(4)
COUNTERS = 7

# FP32 precision (1), one named output "out" [2,3] whose dataBytes the dims call for.
VALID_OUTPUT = bytes([3, *b"out", 1, 2, 2, 3, 0x40])


def build_node(folder: Path) -> Path:
    target = folder / "libnode_fuzz_outputs.so"
    compiler = os.environ.get("CC", "cc")
    include = ovmsx.custom_nodes.include_dir()
    command = [compiler, "-shared", "-fPIC", "-O1", "-pthread", f"-I{include}", f"-I{COUNTING}"]
    subprocess.run([*command, str(SOURCE), "-o", str(target)], check=True)
    return target


class _Counters:
    def __init__(self, path: Path) -> None:
        self._library = ctypes.CDLL(str(path))  # the same library the core dlopened
        self._library.counters.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        self._library.counters.restype = None

    def read(self) -> list[int]:
        values = (ctypes.c_uint64 * COUNTERS)()
        self._library.counters(values)
        return list(values)


def custom_node_outputs(workdir: Path) -> Callable[[bytes], None]:
    path = build_node(workdir)
    caller = CustomNodeCaller(_core.CustomNodeLibrary.load(str(path)).initialize({}))
    counters = _Counters(path)

    def run(data: bytes) -> None:
        description = _core.Tensor("description", np.frombuffer(data or b"\0", np.uint8))
        before = counters.read()
        refusal = None
        try:
            _touch_all(caller.execute_here([description]))
        except StatusError as error:  # a refusal must give back all the node handed out too
            error.__traceback__ = None  # (its frames would hold the outputs)
            refusal = error
        # No collection: outputs must go back as soon as the last reference goes, as in a
        # pipeline (and a full collection per input would slow fuzzing twentyfold).
        _check_balanced(before, counters.read())
        if refusal is not None:
            raise refusal

    return run


def _touch_all(outputs: list[_core.Tensor]) -> None:
    """(In a function of its own, so that no output outlives the call.)"""
    for output in outputs:
        _touch(output)


def _touch(output: _core.Tensor) -> None:
    """Read everything a pipeline reads of an output: name, datatype, shape and every byte."""
    if not isinstance(output.name, str) or not output.datatype:
        raise Finding(f"an output passed with name {output.name!r}, datatype {output.datatype!r}")
    size = _core.datatype_itemsize(output.datatype) or 1
    if int(np.prod(output.shape, dtype=np.uint64)) * size != output.nbytes:
        raise Finding(f"output {output.name!r}: shape {output.shape} but {output.nbytes} bytes")
    if len(bytes(memoryview(output))) != output.nbytes:
        raise Finding(f"output {output.name!r}: its buffer does not hold {output.nbytes} bytes")


def _check_balanced(before: list[int], after: list[int]) -> None:
    change = [a - b for a, b in zip(after, before, strict=True)]
    if change[BAD_RELEASES] or change[BAD_MANAGERS]:
        raise Finding(f"bad releases or managers: {change}")
    if change[ALLOCATED] != change[RELEASED]:
        raise Finding(f"{change[ALLOCATED]} pointers handed out, {change[RELEASED]} came back")


def custom_node_seeds() -> list[bytes]:
    unnamed = bytes([0, 3, 1, 1, 0x40])
    huge = bytes([3, *b"big", 9, 2, 255, 255, 0x40])
    return [
        bytes([0, 1]) + VALID_OUTPUT,
        bytes([0, 2]) + VALID_OUTPUT + bytes([3, *b"two", 7, 1, 5, 0x40]),
        bytes([0, 2]) + VALID_OUTPUT + VALID_OUTPUT,  # the same name twice
        bytes([0, 0]),  # no outputs
        bytes([1]),  # execute fails
        bytes([2, 1]),  # outputs NULL
        bytes([4, 1]),  # outputsCount -1
        bytes([0, 1]) + unnamed,
        bytes([0, 1]) + huge,
        bytes([0, 1, 3, *b"bad", 42, 1, 3, 0x40]),  # unknown precision
        bytes([0, 1, 3, *b"nul", 1, 0x82, 1, 1, 0x40, 8, 0]),  # dims NULL
        bytes([0, 1, 3, *b"nod", 1, 1, 2, 0x80, 8, 0]),  # data NULL
        bytes([0, 1, 3, *b"siz", 1, 1, 2, 0, 7, 0]),  # 7 bytes for 2 floats
        bytes([0, 1, 3, 0xC3, 0x28, 0x41, 1, 1, 1, 0x40]),  # a name not UTF-8
        bytes([0, 1, 3, *b"sca", 8, 0, 0x40]),  # a scalar FP64
    ]
