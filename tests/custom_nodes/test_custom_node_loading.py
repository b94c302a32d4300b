"""Loading a custom node library and initializing nodes (COMPAT.md §1.2, §1.3 initialize)."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest
from counted_nodes import assert_balanced

from ovmsx._core import CustomNodeLibrary, Tensor
from ovmsx.status import StatusCode, StatusError


def mapped(path: Path) -> bool:
    """Whether the dynamic loader has this file mapped into the process."""
    return str(path) in Path("/proc/self/maps").read_text()


def test_load_resolves_the_library(node_path):
    path = node_path("node_add")
    library = CustomNodeLibrary.load(str(path))
    assert library.path == str(path)
    assert repr(library) == f"CustomNodeLibrary({str(path)!r})"


def test_load_accepts_a_path_object(node_path):
    assert CustomNodeLibrary.load(node_path("node_add")).path == str(node_path("node_add"))


def test_missing_file_fails_to_open(tmp_path):
    path = tmp_path / "libabsent.so"
    with pytest.raises(StatusError) as caught:
        CustomNodeLibrary.load(str(path))
    assert caught.value.code == StatusCode.NODE_LIBRARY_LOAD_FAILED_OPEN
    assert str(caught.value).startswith(f"Custom node library failed to open - library: {path}; ")
    assert "No such file or directory" in str(caught.value)


def test_a_file_that_is_no_library_fails_to_open(tmp_path):
    path = tmp_path / "libtext.so"
    path.write_text("not an ELF file")
    with pytest.raises(StatusError) as caught:
        CustomNodeLibrary.load(str(path))
    assert caught.value.code == StatusCode.NODE_LIBRARY_LOAD_FAILED_OPEN
    assert str(path) in caught.value.details


def test_missing_symbol_fails_and_unloads_the_library(node_path):
    path = node_path("node_missing_symbol")
    assert not mapped(path)
    with pytest.raises(StatusError) as caught:
        CustomNodeLibrary.load(str(path))
    assert caught.value.code == StatusCode.NODE_LIBRARY_LOAD_FAILED_SYM
    assert str(caught.value).startswith(
        f"Custom node library failed to load symbol - symbol release is missing; library: {path}; "
    )
    assert not mapped(path), "a library missing a symbol must be dlclosed"


def test_a_loaded_library_is_never_unloaded(node_path):
    path = node_path("node_describe")
    library = CustomNodeLibrary.load(str(path))
    del library
    gc.collect()
    assert mapped(path)


def test_loading_twice_shares_one_library(counted_node):
    node = counted_node("node_add")
    first = CustomNodeLibrary.load(str(node.path))
    second = CustomNodeLibrary.load(str(node.path))
    before = node.counts()
    nodes = [first.initialize({"add_value": "1"}), second.initialize({"add_value": "1"})]
    # Both initialize calls reached the globals the ctypes handle reads: one library in memory.
    assert (node.counts() - before).initialized == 2
    for instance in nodes:
        instance.close()


def test_initialize_gets_a_null_manager_and_the_params(counted_node):
    node = counted_node("node_add")
    before = node.counts()
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"add_value": "2.5"})
    (output,) = instance.execute([Tensor("input_numbers", np.zeros((1, 3), np.float32))])
    np.testing.assert_array_equal(np.asarray(output), [[2.5, 2.5, 2.5]])
    del output
    instance.close()
    delta = node.counts() - before
    assert (delta.initialized, delta.deinitialized) == (1, 1)
    assert_balanced(delta)  # counting.h's initialize counts a non-NULL *manager as bad


def test_params_reach_execute(counted_node):
    instance = CustomNodeLibrary.load(str(counted_node("node_add").path)).initialize({})
    with pytest.raises(StatusError) as caught:
        instance.execute([Tensor("input_numbers", np.zeros((1, 3), np.float32))])
    # node_add returns 1 when the add_value param is missing.
    assert caught.value.code == StatusCode.NODE_LIBRARY_EXECUTION_FAILED
    assert caught.value.details.startswith("execute returned 1;")


def test_initialize_failure(counted_node):
    node = counted_node("node_initialize_fails")
    before = node.counts()
    library = CustomNodeLibrary.load(str(node.path))
    with pytest.raises(StatusError) as caught:
        library.initialize({"any": "thing"})
    assert caught.value.code == StatusCode.NODE_LIBRARY_INITIALIZE_FAILED
    assert str(caught.value) == (
        "Failure during custom node library initialization - "
        f"initialize returned 7; library: {node.path}"
    )
    gc.collect()
    assert (node.counts() - before).deinitialized == 0, "a failed initialize is never undone"


def test_params_must_be_strings(node_path):
    library = CustomNodeLibrary.load(str(node_path("node_add")))
    with pytest.raises(TypeError):
        library.initialize({"add_value": 1})
