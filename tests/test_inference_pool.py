"""The C++ inference pool through its binding: queueing, completion, and retirement."""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovmsx import StatusCode, StatusError, Tensor, _core


@pytest.fixture(scope="module")
def heavy_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """[n, 256] -> a chain of matmuls: long enough that jobs queue behind a running one."""
    x = ops.parameter([-1, 256], ov.Type.f32, name="input")
    weights = ops.constant(np.full((256, 256), 1 / 256, np.float32))
    y = x
    for _ in range(8):
        y = ops.matmul(y, weights, False, False)
    model = ov.Model([y], [x], "heavy")
    model.outputs[0].get_tensor().set_names({"output"})
    path = tmp_path_factory.mktemp("pool") / "heavy.xml"
    ov.save_model(model, path)
    return str(path)


@pytest.fixture(scope="module")
def affine_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, np.ndarray, np.ndarray]:
    """[n, 8] -> x @ w + b: tiny, with a numpy reference; returns (path, w, b)."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    x = ops.parameter([-1, 8], ov.Type.f32, name="input")
    y = ops.add(ops.matmul(x, ops.constant(w), False, False), ops.constant(b))
    model = ov.Model([y], [x], "affine")
    model.outputs[0].get_tensor().set_names({"output"})
    path = tmp_path_factory.mktemp("pool") / "affine.xml"
    ov.save_model(model, path, compress_to_fp16=False)  # the weights numpy uses, exactly
    return str(path), w, b


# Rows of the heavy model's input that keep its one infer request busy for a good part of a
# second: long enough for other threads to start and queue behind it.
LONG_ROWS = 65536


def _pool(path: str, nireq: int) -> tuple[_core.InferencePool, _core.CompletionQueue]:
    queue = _core.CompletionQueue()
    # f32 throughout, so that results match numpy's (the CPU plugin may pick bf16 otherwise).
    compiled = _core.ModelSource.read(path).compile("CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return _core.InferencePool(compiled, nireq, queue), queue


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    """Polls a pool counter; the deadline only stops a hung test, it asserts no timing."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.001)


def _assert_nothing_queued(queue: _core.CompletionQueue) -> None:
    ready, _, _ = select.select([queue.fd], [], [], 0)
    assert not ready
    assert queue.drain() == []


def _drain_all(queue: _core.CompletionQueue, count: int) -> dict[int, tuple[int, list]]:
    done: dict[int, tuple[int, list]] = {}
    while len(done) < count:
        ready, _, _ = select.select([queue.fd], [], [], 30)
        assert ready, f"only {len(done)} of {count} jobs completed"
        for token, outputs, code, _details in queue.drain():
            assert token not in done, f"job {token} completed twice"
            done[token] = (code, outputs)
    return done


def test_close_completes_every_job_once(heavy_model: str) -> None:
    compiled = _core.ModelSource.read(heavy_model).compile("CPU", {})
    queue = _core.CompletionQueue()
    pool = _core.InferencePool(compiled, 1, queue)
    data = Tensor("input", np.ones((2048, 256), np.float32))
    for token in range(6):
        pool.submit(token, [data])  # one runs, five wait for the single infer request
    pool.close()
    done = _drain_all(queue, 6)
    codes = [done[token][0] for token in range(6)]
    assert codes[0] == StatusCode.OK
    assert StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE in codes
    assert set(codes) <= {StatusCode.OK, StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE}
    with pytest.raises(StatusError) as refused:
        pool.submit(99, [data])
    assert refused.value.code == StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE


def test_queued_jobs_all_finish_in_order_of_submission(heavy_model: str) -> None:
    compiled = _core.ModelSource.read(heavy_model).compile("CPU", {})
    queue = _core.CompletionQueue()
    pool = _core.InferencePool(compiled, 2, queue)
    inputs = {t: np.full((4, 256), t, np.float32) for t in range(20)}
    for token, x in inputs.items():
        pool.submit(token, [Tensor("input", x)])
    done = _drain_all(queue, 20)
    for token, x in inputs.items():
        code, (out,) = done[token]
        assert code == StatusCode.OK
        np.testing.assert_allclose(np.asarray(out), x, rtol=1e-2)  # averaging keeps the value


def test_a_size_that_overflows_is_refused_before_openvino(heavy_model: str) -> None:
    compiled = _core.ModelSource.read(heavy_model).compile("CPU", {})
    pool = _core.InferencePool(compiled, 1, _core.CompletionQueue())
    # 2**62 rows of 256 elements: the byte count overflows 64 bits; nothing may be read.
    lying = Tensor._from_raw("input", b"", [2**52, 256], "BF16")
    with pytest.raises(StatusError) as refused:
        pool.submit(1, [lying])
    assert refused.value.code == StatusCode.INVALID_CONTENT_SIZE


def test_split_and_append_field_round_trip_through_protobuf() -> None:
    from ovmsx.frontend import grpc_predict_v2_pb2 as pb

    message = pb.ModelInferRequest(model_name="m", id="7")
    payloads = [b"", b"a" * 200, bytes(range(256)) * 3]
    for index, payload in enumerate(payloads):
        message.inputs.add(name=f"i{index}", datatype="UINT8", shape=[len(payload)])
        message.raw_input_contents.append(payload)
    data = message.SerializeToString()
    rest, ranges = _core.split_field(data, 7)
    assert [data[o : o + n] for o, n in ranges] == payloads
    parsed = pb.ModelInferRequest.FromString(rest)
    assert list(parsed.raw_input_contents) == []
    assert [t.name for t in parsed.inputs] == ["i0", "i1", "i2"]
    tensors = [Tensor("t", np.frombuffer(p, np.uint8)) for p in payloads]
    rebuilt = pb.ModelInferRequest.FromString(_core.append_field(rest, 7, tensors))
    assert rebuilt == message


def test_a_message_without_the_field_comes_back_as_it_is() -> None:
    data = b"\x0a\x01m"
    rest, ranges = _core.split_field(data, 7)
    assert rest is data
    assert ranges == []


def test_model_files_it_cannot_read_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(StatusError) as refused:
        _core.ModelSource.read(str(broken))
    assert refused.value.code == StatusCode.FILE_INVALID
    assert str(broken) in refused.value.message


def test_infer_returns_what_numpy_computes_and_nothing_on_the_queue(
    affine_model: tuple[str, np.ndarray, np.ndarray],
) -> None:
    path, w, b = affine_model
    pool, queue = _pool(path, 1)
    for rows in (1, 5, 64):
        x = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8) / 10
        (out,) = pool.infer([Tensor("input", x)])
        assert out.name == "output"
        np.testing.assert_allclose(np.asarray(out), x @ w + b, rtol=1e-5, atol=1e-5)
    # The request was idle, so each call ran at once, on this thread: no completion went to the
    # queue, and the request is back in the pool.
    assert pool.active == 0
    assert pool.waiting == 0
    _assert_nothing_queued(queue)


def test_blocking_and_async_jobs_share_one_request_and_each_completes_once(
    affine_model: tuple[str, np.ndarray, np.ndarray],
) -> None:
    path, w, b = affine_model
    pool, queue = _pool(path, 1)
    calls, threads_count, jobs = 150, 4, 300
    failures: list[BaseException] = []

    def blocking_caller(seed: int) -> None:
        try:
            for i in range(calls):
                x = np.full((2, 8), seed * 1000 + i, np.float32)
                (out,) = pool.infer([Tensor("input", x)])
                np.testing.assert_allclose(np.asarray(out), x @ w + b, rtol=1e-5)
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=blocking_caller, args=(n,)) for n in range(threads_count)]
    for thread in threads:
        thread.start()
    inputs = {token: np.full((3, 8), -token, np.float32) for token in range(jobs)}
    for token, x in inputs.items():
        pool.submit(token, [Tensor("input", x)])
    done = _drain_all(queue, jobs)
    for thread in threads:
        thread.join()
    assert failures == []
    for token, x in inputs.items():
        code, (out,) = done[token]
        assert code == StatusCode.OK
        np.testing.assert_allclose(np.asarray(out), x @ w + b, rtol=1e-5)
    # Blocking results never went to the queue, and no async job completed twice.
    _assert_nothing_queued(queue)
    assert (pool.active, pool.waiting) == (0, 0)


def test_close_fails_waiting_blocking_callers_and_lets_the_running_one_finish(
    heavy_model: str,
) -> None:
    pool, queue = _pool(heavy_model, 1)
    long_input = np.ones((LONG_ROWS, 256), np.float32)
    small = np.full((4, 256), 2, np.float32)
    results: dict[str, object] = {}

    def call(name: str, x: np.ndarray) -> None:
        try:
            (out,) = pool.infer([Tensor("input", x)])
            results[name] = np.asarray(out).copy()
        except StatusError as error:
            results[name] = error

    running = threading.Thread(target=call, args=("running", long_input))
    running.start()
    _wait_until(lambda: pool.active == 1, "the first caller holds the request")
    waiting = [threading.Thread(target=call, args=(f"waiting{n}", small)) for n in range(2)]
    for thread in waiting:
        thread.start()
    _wait_until(lambda: pool.waiting == 2, "two callers wait for the request")
    pool.submit(7, [Tensor("input", small)])  # an async job in the same FIFO, behind them
    pool.close()  # returns only once the running inference, on the caller's thread, is done
    assert (pool.active, pool.waiting) == (0, 0)
    for thread in [running, *waiting]:
        thread.join()
    np.testing.assert_allclose(results["running"], long_input, rtol=1e-2)
    for n in range(2):
        refused = results[f"waiting{n}"]
        assert isinstance(refused, StatusError)
        assert refused.code == StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE
    done = _drain_all(queue, 1)
    assert done[7][0] == StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE
    _assert_nothing_queued(queue)
    with pytest.raises(StatusError) as after:
        pool.infer([Tensor("input", small)])
    assert after.value.code == StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE


def test_close_waits_for_a_blocking_job_started_by_a_finishing_request(heavy_model: str) -> None:
    pool, queue = _pool(heavy_model, 1)
    long_input = np.ones((LONG_ROWS, 256), np.float32)
    pool.submit(1, [Tensor("input", long_input)])
    results: list[np.ndarray] = []
    caller = threading.Thread(
        target=lambda: results.append(np.asarray(pool.infer([Tensor("input", long_input)])[0]))
    )
    caller.start()
    _wait_until(lambda: pool.waiting == 1, "the blocking caller waits behind the async job")
    # The async job's callback starts the blocking job; close() cannot fail it any more.
    _wait_until(lambda: pool.waiting == 0, "the finishing request started the blocking job")
    pool.close()
    assert (pool.active, pool.waiting) == (0, 0)
    caller.join()
    np.testing.assert_allclose(results[0], long_input, rtol=1e-2)
    done = _drain_all(queue, 1)
    assert done[1][0] == StatusCode.OK
    _assert_nothing_queued(queue)


def test_infer_refuses_a_wrong_number_of_inputs(
    affine_model: tuple[str, np.ndarray, np.ndarray],
) -> None:
    pool, queue = _pool(affine_model[0], 1)
    x = Tensor("input", np.ones((1, 8), np.float32))
    for inputs in ([], [x, x]):
        with pytest.raises(StatusError) as refused:
            pool.infer(inputs)
        assert refused.value.code == StatusCode.INTERNAL_ERROR
        assert f"got {len(inputs)}" in refused.value.message
    assert (pool.active, pool.waiting) == (0, 0)
    _assert_nothing_queued(queue)


def test_infer_fails_with_the_code_and_details_submit_completes_with(
    affine_model: tuple[str, np.ndarray, np.ndarray],
) -> None:
    pool, queue = _pool(affine_model[0], 1)
    wrong_shape = Tensor("input", np.ones((2, 4), np.float32))  # 8 values, but not [n, 8]
    pool.submit(1, [wrong_shape])
    assert select.select([queue.fd], [], [], 30)[0]
    ((token, _outputs, code, details),) = queue.drain()
    assert token == 1
    assert code != StatusCode.OK
    with pytest.raises(StatusError) as refused:
        pool.infer([wrong_shape])
    assert (refused.value.code, refused.value.details) == (code, details)
    assert (pool.active, pool.waiting) == (0, 0)
    _assert_nothing_queued(queue)


def test_other_python_threads_run_while_infer_blocks(heavy_model: str) -> None:
    pool, _queue = _pool(heavy_model, 1)
    started, stop = threading.Event(), threading.Event()
    seen_running = 0

    def watch() -> None:
        nonlocal seen_running
        started.set()
        while not stop.is_set():
            # The request is only in use inside infer(): seeing it so, this thread ran then.
            seen_running += pool.active

    watcher = threading.Thread(target=watch)
    watcher.start()
    started.wait()
    (out,) = pool.infer([Tensor("input", np.ones((LONG_ROWS, 256), np.float32))])
    stop.set()
    watcher.join()
    assert seen_running > 0
    assert np.asarray(out).shape == (LONG_ROWS, 256)


def test_blocking_and_submitted_inferences_are_timed_apart(
    affine_model: tuple[str, np.ndarray, np.ndarray],
) -> None:
    """Blocking inferences measure the model alone; submitted ones include waking OpenVINO's
    thread, so the server can tell a quick model from a quick round trip."""
    path, _, _ = affine_model
    pool, queue = _pool(path, 2)
    assert (pool.inferences, pool.round_trips) == (0, 0)
    assert pool.inference_time == pool.round_trip_time == float("inf")
    x = Tensor("input", np.ones((1, 8), np.float32))
    for _ in range(3):
        pool.infer([x])
    assert (pool.inferences, pool.round_trips) == (3, 0)
    assert 0 < pool.inference_time < float("inf")
    for token in range(5):
        pool.submit(token, [x])
    done = _drain_all(queue, 5)
    assert all(code == StatusCode.OK for code, _ in done.values())
    assert (pool.inferences, pool.round_trips) == (3, 5)
    assert 0 < pool.round_trip_time < float("inf")
