"""execute from several Python threads: it runs without the GIL, concurrently, and a node
retired while a call is in flight is deinitialized only after that call's outputs die."""

from __future__ import annotations

import ctypes
import gc
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from counted_nodes import assert_balanced

from ovmsx._core import CustomNodeLibrary, Tensor

THREADS = 4


def test_execute_releases_the_gil(counted_node):
    # node_rendezvous succeeds only when all four calls are inside execute at the same time.
    node = counted_node("node_rendezvous")
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"parties": str(THREADS)})
    before = node.counts()

    def call(_: int) -> list[int]:
        done = []
        for _ in range(10):
            (output,) = instance.execute([])
            done.append(int(np.asarray(output)[0, 0]))
        return done

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(call, range(THREADS)))
    assert results == [[0] * 10] * THREADS
    assert_balanced(node.counts() - before)
    instance.close()


def test_concurrent_executions_are_correct(counted_node):
    node = counted_node("node_add")
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"add_value": "10"})
    before = node.counts()

    def call(worker: int) -> int:
        checked = 0
        for i in range(500):
            values = np.full((1, 16), worker * 1000 + i, np.float32)
            (output,) = instance.execute([Tensor("input_numbers", values)])
            np.testing.assert_array_equal(np.asarray(output), values + 10)
            checked += 1
        return checked

    with ThreadPoolExecutor(THREADS) as pool:
        assert sum(pool.map(call, range(THREADS))) == THREADS * 500
    gc.collect()
    delta = node.counts() - before
    assert delta.allocated == THREADS * 500 * 3
    assert_balanced(delta)
    instance.close()


def test_close_during_a_call_waits_for_its_outputs(counted_node):
    node = counted_node("node_rendezvous")
    node.cdll.arrive.argtypes = [ctypes.c_int]
    before = node.counts()
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"parties": "2"})
    with ThreadPoolExecutor(1) as pool:
        call = pool.submit(instance.execute, [])
        deadline = time.monotonic() + 5
        while node.cdll.waiting_calls() != 1:  # the call is inside execute
            assert time.monotonic() < deadline, "execute never started"
            time.sleep(0.001)
        instance.close()
        assert (node.counts() - before).deinitialized == 0, "a call is still running"
        assert node.cdll.arrive(2) == 0  # ctypes drops the GIL: let the call finish
        outputs = call.result(timeout=10)
    assert [output.name for output in outputs] == ["done"]
    assert (node.counts() - before).deinitialized == 0, "its output is still alive"
    del outputs, call
    gc.collect()
    delta = node.counts() - before
    assert delta.deinitialized == 1
    assert_balanced(delta)
