"""The built-in add_one node, called through its C ABI with ctypes: numbers against numpy, and
its buffer pool kept balanced through failures, fallbacks and concurrent releases."""

from __future__ import annotations

import ctypes
import queue
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_builtin_abi import (
    FP32,
    FP64,
    Input,
    Node,
    TensorInfo,
    as_array,
    load,
    node,
    rss_bytes,
)

from ovmsx import custom_nodes
from ovmsx._core import CustomNodeLibrary, Tensor
from ovmsx.status import StatusCode, StatusError

BAD_PARAMS, NOT_INITIALIZED, BAD_INPUTS, BAD_RELEASE, OUTSTANDING = 1, 2, 3, 5, 6


@pytest.fixture(scope="module")
def add_one() -> ctypes.CDLL:
    return load("add_one")


def numbers(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-100, 100, (1, 10)).astype(np.float32)


def expected(values: np.ndarray, add: int = 1, sub: int = 0) -> np.ndarray:
    # Float32 arithmetic in the node's order: (x + add) - sub.
    return (values + np.float32(add)) - np.float32(sub)


def test_metadata_is_fixed_1x10_fp32(add_one: ctypes.CDLL) -> None:
    with node(add_one) as n:
        assert n.inputs_info() == [TensorInfo("input_numbers", (1, 10), FP32)]
        assert n.outputs_info() == [TensorInfo("output_numbers", (1, 10), FP32)]


def test_defaults_add_one(add_one: ctypes.CDLL) -> None:
    values = numbers()
    with node(add_one) as n:
        result = n.execute([Input("input_numbers", values)])
    assert list(result) == ["output_numbers"]
    np.testing.assert_array_equal(result["output_numbers"], expected(values))


@settings(max_examples=50, deadline=None)
@given(
    add=st.integers(-(2**24), 2**24),
    sub=st.integers(-(2**24), 2**24),
    values=st.lists(st.floats(-1e6, 1e6, width=32), min_size=10, max_size=10),
)
def test_add_and_sub_numbers_match_numpy(
    add_one: ctypes.CDLL, add: int, sub: int, values: list[float]
) -> None:
    array = np.array([values], np.float32)
    with node(add_one, {"add_number": str(add), "sub_number": str(sub)}) as n:
        result = n.execute([Input("input_numbers", array)])["output_numbers"]
    np.testing.assert_array_equal(result, expected(array, add, sub))


def test_input_found_by_name_among_others(add_one: ctypes.CDLL) -> None:
    values = numbers()
    other = Input("unrelated", np.zeros((1, 3), np.float32))
    with node(add_one) as n:
        result = n.execute([other, Input("input_numbers", values)])["output_numbers"]
    np.testing.assert_array_equal(result, expected(values))


@pytest.mark.parametrize(
    "params",
    [
        {"add_number": "one"},
        {"sub_number": "1.5"},
        {"add_number": str(2**24 + 1)},
        {"output_queue_size": "0"},
        {"info_queue_size": "-3"},
        {"output_queue_size": ""},
    ],
)
def test_bad_params_fail_initialize(add_one: ctypes.CDLL, params: dict[str, str]) -> None:
    n = Node(add_one, params)
    assert n.status == BAD_PARAMS
    assert n.manager.value is None


def test_calls_without_a_manager_fail_cleanly(add_one: ctypes.CDLL) -> None:
    n = Node(add_one, {"output_queue_size": "0"})
    status, outputs, _ = n.execute_raw([Input("input_numbers", numbers())])
    assert status == NOT_INITIALIZED
    assert not outputs
    assert n.deinitialize() == 0  # deinitialize(NULL) is a no-op


WRONG_INPUTS = {
    "short": Input("input_numbers", np.zeros((1, 9), np.float32)),
    "batch": Input("input_numbers", np.zeros((2, 10), np.float32)),
    "flat": Input("input_numbers", np.zeros(10, np.float32)),
    "fp64": Input("input_numbers", np.zeros((1, 10), np.float64), precision=FP64),
    "bytes": Input("input_numbers", np.zeros((1, 10), np.float32), data_bytes=36),
    "name": Input("numbers", np.zeros((1, 10), np.float32)),
}


@pytest.mark.parametrize("case", WRONG_INPUTS)
def test_wrong_inputs_fail_and_hand_out_nothing(add_one: ctypes.CDLL, case: str) -> None:
    with node(add_one, {"output_queue_size": "1"}) as n:  # deinitialize checks the pool
        for _ in range(3):
            status, outputs, _ = n.execute_raw([WRONG_INPUTS[case]])
            assert status == BAD_INPUTS
            assert not outputs
        # The one pool buffer of each kind is still free.
        np.testing.assert_array_equal(
            n.execute([Input("input_numbers", numbers())])["output_numbers"], expected(numbers())
        )


def test_no_inputs_fails(add_one: ctypes.CDLL) -> None:
    with node(add_one) as n:
        assert n.execute_raw([])[0] == BAD_INPUTS


def test_thousand_executes_keep_the_pool_balanced(add_one: ctypes.CDLL) -> None:
    with node(add_one, {"add_number": "3"}) as n:
        for seed in range(1000):
            values = numbers(seed)
            result = n.execute([Input("input_numbers", values)])["output_numbers"]
            np.testing.assert_array_equal(result, expected(values, 3))
            n.inputs_info()
            n.outputs_info()


def test_unreleased_buffers_are_reported_by_deinitialize(add_one: ctypes.CDLL) -> None:
    n = Node(add_one)
    status, _, count = n.execute_raw([Input("input_numbers", numbers())])
    assert (status, count) == (0, 1)
    assert n.deinitialize() == OUTSTANDING


def test_empty_pool_falls_back_to_malloc(add_one: ctypes.CDLL) -> None:
    with node(add_one, {"output_queue_size": "2"}) as n:
        held = []
        for seed in range(7):  # 2 from the pool, 5 from malloc
            status, outputs, count = n.execute_raw([Input("input_numbers", numbers(seed))])
            assert (status, count) == (0, 1)
            held.append((seed, outputs))
        addresses = {ctypes.addressof(outputs.contents) for _, outputs in held}
        assert len(addresses) == 7
        for seed, outputs in reversed(held):
            np.testing.assert_array_equal(as_array(outputs[0]), expected(numbers(seed)))
            n.release_outputs(outputs, 1)


def test_double_release_of_a_pool_buffer_is_refused(add_one: ctypes.CDLL) -> None:
    with node(add_one) as n:
        status, outputs, _ = n.execute_raw([Input("input_numbers", numbers())])
        assert status == 0
        data = outputs[0].data
        n.release_outputs(outputs, 1)
        assert n.release(data) == BAD_RELEASE
        inside = ctypes.cast(data, ctypes.c_void_p).value + 4
        assert n.release(inside) == BAD_RELEASE


def test_malloc_fallback_does_not_leak(add_one: ctypes.CDLL) -> None:
    values = Input("input_numbers", numbers())
    with node(add_one, {"output_queue_size": "1"}) as n:

        def cycle(times: int) -> None:
            for _ in range(times):
                first = n.execute_raw([values])
                second = n.execute_raw([values])  # the pool is empty: malloc
                n.release_outputs(first[1], 1)
                n.release_outputs(second[1], 1)

        cycle(2000)
        before = rss_bytes()
        cycle(50_000)  # leaking the fallback would grow RSS by about 8 MB
        assert rss_bytes() - before < 2 * 2**20


def test_wrong_inputs_do_not_leak(add_one: ctypes.CDLL) -> None:
    wrong = [WRONG_INPUTS["short"]]
    with node(add_one, {"output_queue_size": "1"}) as n:
        for _ in range(2000):
            n.execute_raw(wrong)
        before = rss_bytes()
        for _ in range(50_000):
            assert n.execute_raw(wrong)[0] == BAD_INPUTS
        assert rss_bytes() - before < 2 * 2**20


def test_concurrent_executes_with_releases_from_another_thread(add_one: ctypes.CDLL) -> None:
    # ctypes drops the GIL around each call, so the node really runs on 8 threads at once
    # while a ninth releases what they produced, as a server's tensors do when they die.
    threads, per_thread = 8, 300
    produced: queue.Queue[object] = queue.Queue()
    failures: list[str] = []

    with node(add_one, {"add_number": "2", "sub_number": "5", "output_queue_size": "4"}) as n:

        def work(seed: int) -> None:
            values = numbers(seed)
            want = expected(values, 2, 5)
            for _ in range(per_thread):
                status, outputs, count = n.execute_raw([Input("input_numbers", values)])
                if status != 0 or count != 1:
                    failures.append(f"status {status}")
                    continue
                produced.put((want, outputs))

        def releaser() -> None:
            for _ in range(threads * per_thread):
                try:
                    want, outputs = produced.get(timeout=60)
                except queue.Empty:
                    failures.append("workers stopped producing")
                    return
                if not np.array_equal(as_array(outputs[0]), want):
                    failures.append("wrong numbers")
                n.release_outputs(outputs, 1)

        workers = [
            threading.Thread(target=work, args=(seed,), daemon=True) for seed in range(threads)
        ]
        release_thread = threading.Thread(target=releaser, daemon=True)
        for thread in [*workers, release_thread]:
            thread.start()
        for thread in [*workers, release_thread]:
            thread.join(timeout=120)
        assert not release_thread.is_alive()
    assert failures == []


# Through ovmsx's own loader (ovmsx._core.CustomNodeLibrary), as a pipeline runs the node.


def test_served_by_the_ovmsx_loader() -> None:
    instance = CustomNodeLibrary.load(str(custom_nodes.built_in("add_one"))).initialize(
        {"add_number": "4", "sub_number": "1"}
    )
    assert [(i.name, i.datatype, i.shape) for i in instance.inputs_info()] == [
        ("input_numbers", "FP32", [1, 10])
    ]
    values = numbers()
    (output,) = instance.execute([Tensor("input_numbers", values)])
    assert (output.name, output.datatype, output.shape) == ("output_numbers", "FP32", (1, 10))
    # The output views a pool buffer, which outlives close() until the Tensor dies.
    instance.close()
    np.testing.assert_array_equal(np.asarray(output), expected(values, 4, 1))


def test_wrong_shape_through_the_loader_is_an_execution_failure() -> None:
    instance = CustomNodeLibrary.load(str(custom_nodes.built_in("add_one"))).initialize({})
    with pytest.raises(StatusError) as caught:
        instance.execute([Tensor("input_numbers", np.zeros((1, 9), np.float32))])
    assert caught.value.code == StatusCode.NODE_LIBRARY_EXECUTION_FAILED
    instance.close()
