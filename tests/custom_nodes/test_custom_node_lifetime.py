"""When deinitialize and release run: once each, and deinitialize only after the node is retired
and its last output Tensor has died (release takes the manager; COMPAT.md §1.3)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from counted_nodes import assert_balanced, resident_bytes

from ovmsx._core import CustomNodeLibrary, Tensor
from ovmsx.status import StatusCode, StatusError

INPUT = Tensor("input_numbers", np.arange(4, dtype=np.float32).reshape(1, 4))


def test_close_deinitializes_once(counted_node):
    node = counted_node("node_add")
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"add_value": "1"})
    before = node.counts()
    instance.close()
    assert (node.counts() - before).deinitialized == 1
    instance.close()
    del instance
    gc.collect()
    assert (node.counts() - before).deinitialized == 1


def test_a_node_dropped_without_close_is_deinitialized(counted_node):
    node = counted_node("node_add")
    before = node.counts()
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"add_value": "1"})
    del instance
    gc.collect()
    delta = node.counts() - before
    assert (delta.initialized, delta.deinitialized) == (1, 1)


def test_deinitialize_waits_for_the_last_output(counted_node):
    node = counted_node("node_add")
    before = node.counts()
    library = CustomNodeLibrary.load(str(node.path))
    instance = library.initialize({"add_value": "1"})
    first, second = instance.execute([INPUT]), instance.execute([INPUT])
    instance.close()
    del instance, library
    gc.collect()
    assert (node.counts() - before).deinitialized == 0, "outputs still need the manager"
    np.testing.assert_array_equal(np.asarray(first[0]), [[1, 2, 3, 4]])
    del first
    gc.collect()
    assert (node.counts() - before).deinitialized == 0
    del second
    gc.collect()
    delta = node.counts() - before
    assert delta.deinitialized == 1
    assert_balanced(delta)  # includes: no pointer was still out at deinitialize


@pytest.mark.parametrize("call", ["execute", "inputs_info", "outputs_info"])
def test_a_closed_node_refuses_calls(node_path, call):
    instance = CustomNodeLibrary.load(str(node_path("node_add"))).initialize({"add_value": "1"})
    instance.close()
    arguments = ([INPUT],) if call == "execute" else ()
    with pytest.raises(StatusError) as caught:
        getattr(instance, call)(*arguments)
    assert caught.value.code == StatusCode.NODE_LIBRARY_MISSING
    assert caught.value.details == f"the custom node was closed; library: {node_path('node_add')}"


def test_many_executions_do_not_leak(counted_node):
    node = counted_node("node_add")
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"add_value": "1"})
    data = Tensor("input_numbers", np.ones((1, 1024), np.float32))

    def run(times: int) -> None:
        for _ in range(times):
            (output,) = instance.execute([data])
            del output

    run(1000)  # warm-up: allocator pools, pybind11 caches
    gc.collect()
    rss_before, before = resident_bytes(), node.counts()
    run(10_000)
    gc.collect()
    rss_growth, delta = resident_bytes() - rss_before, node.counts() - before
    assert delta.allocated == 30_000  # outputs array, dims and data per execution
    assert_balanced(delta)
    # A leaked output (4 KiB of data, or even its ~200-byte Tensor) would add megabytes.
    assert rss_growth < 1 << 20, f"resident memory grew by {rss_growth} bytes"
    instance.close()
