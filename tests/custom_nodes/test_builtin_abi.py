"""The built-in node libraries against the custom-node C ABI itself (COMPAT.md §1.1).

Also home of `Node`, a ctypes driver that calls a library's six functions the way a server does;
test_builtin_add_one.py and test_builtin_image_transformation.py import it from here.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from ovmsx import custom_nodes

BUILT_IN = ("add_one", "image_transformation")
ABI_FUNCTIONS = {
    "initialize",
    "deinitialize",
    "execute",
    "getInputsInfo",
    "getOutputsInfo",
    "release",
}
FP32, FP64 = 1, 8  # CustomNodeTensorPrecision


class CustomNodeTensor(ctypes.Structure):
    _fields_ = (
        ("name", ctypes.c_char_p),
        ("data", ctypes.POINTER(ctypes.c_uint8)),
        ("dataBytes", ctypes.c_uint64),
        ("dims", ctypes.POINTER(ctypes.c_uint64)),
        ("dimsCount", ctypes.c_uint64),
        ("precision", ctypes.c_int),
    )


class CustomNodeTensorInfo(ctypes.Structure):
    _fields_ = (
        ("name", ctypes.c_char_p),
        ("dims", ctypes.POINTER(ctypes.c_uint64)),
        ("dimsCount", ctypes.c_uint64),
        ("precision", ctypes.c_int),
    )


class CustomNodeParam(ctypes.Structure):
    _fields_ = (("key", ctypes.c_char_p), ("value", ctypes.c_char_p))


_P = ctypes.POINTER
_INT, _VOIDP = ctypes.c_int, ctypes.c_void_p
_SIGNATURES = {
    "initialize": (_P(_VOIDP), _P(CustomNodeParam), _INT),
    "deinitialize": (_VOIDP,),
    "execute": (
        _P(CustomNodeTensor),
        _INT,
        _P(_P(CustomNodeTensor)),
        _P(_INT),
        _P(CustomNodeParam),
        _INT,
        _VOIDP,
    ),
    "getInputsInfo": (_P(_P(CustomNodeTensorInfo)), _P(_INT), _P(CustomNodeParam), _INT, _VOIDP),
    "getOutputsInfo": (_P(_P(CustomNodeTensorInfo)), _P(_INT), _P(CustomNodeParam), _INT, _VOIDP),
    "release": (_VOIDP, _VOIDP),
}


def load(name: str) -> ctypes.CDLL:
    """The installed built-in library `name`, its six functions typed."""
    library = ctypes.CDLL(str(custom_nodes.built_in(name)), mode=os.RTLD_LAZY | os.RTLD_LOCAL)
    for function, argtypes in _SIGNATURES.items():
        getattr(library, function).argtypes = argtypes
        getattr(library, function).restype = ctypes.c_int
    return library


def param_array(params: Mapping[str, str]) -> ctypes.Array[CustomNodeParam]:
    items = [CustomNodeParam(key.encode(), value.encode()) for key, value in params.items()]
    return (CustomNodeParam * max(len(items), 1))(*items)


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dims: tuple[int, ...]
    precision: int


class Input:
    """One input tensor over a numpy array's memory, as a server passes it (not owned)."""

    def __init__(self, name: str, array: np.ndarray, precision: int = FP32, **overrides: int):
        self.array = np.ascontiguousarray(array)
        self.dims = (ctypes.c_uint64 * max(self.array.ndim, 1))(*self.array.shape)
        self.struct = CustomNodeTensor(
            name.encode(),
            self.array.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
            overrides.get("data_bytes", self.array.nbytes),
            self.dims,
            self.array.ndim,
            precision,
        )


class Node:
    """One node instance: initialize() with its params, then the ABI calls a server makes.

    The *_raw methods return what the library handed out, unreleased; the others copy it into
    numpy and release it in the server's order (COMPAT.md §1.3): each dims, each data, the array.
    """

    def __init__(
        self,
        library: ctypes.CDLL,
        params: Mapping[str, str] | None = None,
        *,
        initialize: bool = True,
    ) -> None:
        self.library = library
        self.params = param_array(params or {})
        self.params_count = len(params or {})
        self.manager = ctypes.c_void_p(None)  # what the server passes: a pointer to NULL
        self.status = (
            library.initialize(ctypes.byref(self.manager), self.params, self.params_count)
            if initialize
            else None
        )

    def deinitialize(self) -> int:
        status = self.library.deinitialize(self.manager)
        self.manager = ctypes.c_void_p(None)
        return status

    def release(self, pointer: object) -> int:
        return self.library.release(ctypes.cast(pointer, ctypes.c_void_p), self.manager)

    def execute_raw(
        self, inputs: list[Input]
    ) -> tuple[int, ctypes._Pointer[CustomNodeTensor], int]:
        array = (CustomNodeTensor * max(len(inputs), 1))(*(i.struct for i in inputs))
        outputs = ctypes.POINTER(CustomNodeTensor)()
        count = ctypes.c_int(0)
        status = self.library.execute(
            array,
            len(inputs),
            ctypes.byref(outputs),
            ctypes.byref(count),
            self.params,
            self.params_count,
            self.manager,
        )
        return status, outputs, count.value

    def release_outputs(self, outputs: ctypes._Pointer[CustomNodeTensor], count: int) -> None:
        for i in range(count):
            assert self.release(outputs[i].dims) == 0
        for i in range(count):
            assert self.release(outputs[i].data) == 0
        assert self.release(outputs) == 0

    def execute(self, inputs: list[Input]) -> dict[str, np.ndarray]:
        status, outputs, count = self.execute_raw(inputs)
        assert status == 0
        try:
            return {outputs[i].name.decode(): as_array(outputs[i]) for i in range(count)}
        finally:
            self.release_outputs(outputs, count)

    def _info(self, function: str) -> list[TensorInfo]:
        info = ctypes.POINTER(CustomNodeTensorInfo)()
        count = ctypes.c_int(0)
        status = getattr(self.library, function)(
            ctypes.byref(info), ctypes.byref(count), self.params, self.params_count, self.manager
        )
        assert status == 0
        entries = [
            TensorInfo(
                info[i].name.decode(),
                tuple(info[i].dims[d] for d in range(info[i].dimsCount)),
                info[i].precision,
            )
            for i in range(count.value)
        ]
        for i in range(count.value):
            assert self.release(info[i].dims) == 0
        assert self.release(info) == 0
        return entries

    def inputs_info(self) -> list[TensorInfo]:
        return self._info("getInputsInfo")

    def outputs_info(self) -> list[TensorInfo]:
        return self._info("getOutputsInfo")


def as_array(tensor: CustomNodeTensor) -> np.ndarray:
    """A copy of an FP32 output tensor, after checking its size against its dims."""
    assert tensor.precision == FP32
    shape = tuple(tensor.dims[d] for d in range(tensor.dimsCount))
    assert tensor.dataBytes == 4 * int(np.prod(shape, dtype=np.int64))
    data = ctypes.cast(tensor.data, ctypes.POINTER(ctypes.c_float))
    return np.ctypeslib.as_array(data, shape=shape).copy()


@contextmanager
def node(library: ctypes.CDLL, params: Mapping[str, str] | None = None) -> Iterator[Node]:
    """A node that initialized successfully, and whose deinitialize succeeds at the end."""
    instance = Node(library, params)
    assert instance.status == 0
    assert instance.manager.value is not None
    yield instance
    assert instance.deinitialize() == 0


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_struct_layouts_match_the_header() -> None:
    assert ctypes.sizeof(CustomNodeTensor) == 48
    assert CustomNodeTensor.precision.offset == 40
    assert ctypes.sizeof(CustomNodeTensorInfo) == 32
    assert CustomNodeTensorInfo.precision.offset == 24
    assert ctypes.sizeof(CustomNodeParam) == 16


@pytest.mark.parametrize("name", BUILT_IN)
def test_installed_where_built_in_finds_it(name: str) -> None:
    path: Path = custom_nodes.built_in(name)
    assert path.name == f"libcustom_node_{name}.so"
    assert path.is_file()


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
@pytest.mark.parametrize("name", BUILT_IN)
def test_exports_exactly_the_six_abi_functions(name: str) -> None:
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", str(custom_nodes.built_in(name))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert {line.split()[-1] for line in listing.splitlines()} == ABI_FUNCTIONS


@pytest.mark.parametrize("name", BUILT_IN)
def test_loads_in_a_fresh_process_without_library_path(name: str) -> None:
    # The RPATH alone must find libopenvino inside the installed wheel.
    # A bare interpreter: importing ovmsx would load libopenvino first, through _core.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    code = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"
    path = str(custom_nodes.built_in(name))
    subprocess.run([sys.executable, "-c", code, path], env=env, check=True)
