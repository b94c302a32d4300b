"""Where a callee runs (call_timer.py), decided from what its calls cost: the same decisions
whatever the threads around it do, and each change logged at INFO with its reason."""

from __future__ import annotations

import logging
import threading

import pytest

from ovmsx.call_timer import (
    BLOCKING_CALL_FACTOR,
    SLOW_CALL_FACTOR,
    WARM_UP_CALLS,
    CallTimer,
    mark_worker_thread,
    on_worker_thread,
)

BUDGET = 100e-6
US = 1e-6


def worker_calls(timer: CallTimer, count: int, wall: float, cpu: float) -> None:
    for _ in range(count):
        timer.record(wall, cpu, inline=False)


def quick_timer(name: str) -> CallTimer:
    """A timer whose callee has just gone inline after quick calls on a worker."""
    timer = CallTimer(BUDGET, name)
    worker_calls(timer, WARM_UP_CALLS, 30 * US, 20 * US)
    assert timer.quick
    return timer


def test_a_quick_callee_goes_inline_after_warm_up_even_when_the_gil_slowed_it_on_workers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On a busy worker most calls wait for the GIL; one that did not shows what it costs."""
    timer = CallTimer(BUDGET, "node quick")
    with caplog.at_level(logging.INFO, "ovmsx.placement"):
        worker_calls(timer, WARM_UP_CALLS - 2, 900 * US, 20 * US)
        timer.record(25 * US, 20 * US, inline=False)
        assert not timer.quick  # still warming up
        timer.record(900 * US, 20 * US, inline=False)
    assert timer.quick
    (line,) = [record.getMessage() for record in caplog.records]
    assert line.startswith("node quick runs inline now: 20 µs of CPU")
    assert "fastest of its last 8 calls on a worker 25 µs (budget 100 µs)" in line


def test_a_quick_callee_stays_inline_through_ordinary_noise() -> None:
    timer = quick_timer("node steady")
    for call in range(10_000):
        # Mostly 20 µs, now and then a call of 4 ms (the thread preempted, or a garbage
        # collection): a spike, not a slow callee.
        timer.record((4000 if call % 97 == 0 else 20) * US, None, inline=True)
        assert timer.quick


def test_a_callee_that_blocks_never_goes_inline() -> None:
    """Sleeping or waiting for I/O costs no CPU, and no call of it is ever fast."""
    timer = CallTimer(BUDGET, "node sleeper")
    worker_calls(timer, 1000, 2e-3, 5 * US)
    assert not timer.quick


def test_a_callee_that_blocks_briefly_comes_back_at_once_and_ever_more_rarely() -> None:
    timer = CallTimer(BUDGET, "node napper")
    inline_calls = 0
    for _ in range(10_000):
        if timer.quick:
            timer.record(500 * US, None, inline=True)
            inline_calls += 1
        else:
            timer.record(500 * US, 5 * US, inline=False)
    assert not timer.quick
    # One call per return, after 8, 16, 32, ... worker calls, then one per 1,024: 15 here.
    assert inline_calls <= 16


def test_a_callee_that_computes_for_long_never_goes_inline() -> None:
    timer = CallTimer(BUDGET, "node heavy")
    worker_calls(timer, 1000, 150 * US, 150 * US)
    assert not timer.quick


def test_one_blocking_inline_call_sends_it_back_and_each_return_takes_twice_as_long(
    caplog: pytest.LogCaptureFixture,
) -> None:
    timer = quick_timer("node sometimes-slow")
    with caplog.at_level(logging.INFO, "ovmsx.placement"):
        timer.record(BLOCKING_CALL_FACTOR * BUDGET * 1.5, None, inline=True)
    assert not timer.quick
    assert caplog.records[-1].getMessage() == (
        "node sometimes-slow moves to a worker: a call took 15,000 µs on the serving thread "
        "(budget 100 µs); 16 calls there before it may return"
    )
    worker_calls(timer, 15, 30 * US, 20 * US)
    assert not timer.quick
    worker_calls(timer, 1, 30 * US, 20 * US)
    assert timer.quick
    timer.record(BLOCKING_CALL_FACTOR * BUDGET * 1.5, None, inline=True)
    worker_calls(timer, 31, 30 * US, 20 * US)
    assert not timer.quick
    worker_calls(timer, 1, 30 * US, 20 * US)
    assert timer.quick


def test_two_slow_inline_calls_in_a_row_send_it_back() -> None:
    timer = quick_timer("node turned-slow")
    timer.record(SLOW_CALL_FACTOR * BUDGET * 2, None, inline=True)
    assert timer.quick
    timer.record(SLOW_CALL_FACTOR * BUDGET * 2, None, inline=True)
    assert not timer.quick


def test_inline_calls_that_grow_slow_on_average_send_it_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    timer = quick_timer("node drifting")
    calls = 0
    with caplog.at_level(logging.INFO, "ovmsx.placement"):
        while timer.quick:
            timer.record(300 * US, None, inline=True)  # three budgets: never one slow call
            calls += 1
    assert 5 <= calls <= 20
    assert "its calls there average" in caplog.records[-1].getMessage()


def test_timed_counts_a_call_on_a_marked_worker_thread_as_a_worker_call() -> None:
    timer = CallTimer(BUDGET, "node threads")
    seen = []

    def work() -> None:
        mark_worker_thread()
        seen.append(on_worker_thread())
        for _ in range(WARM_UP_CALLS):
            timer.timed(sum, range(10))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [True]
    assert not on_worker_thread()  # the mark belongs to the thread that made it
    assert timer.quick  # quick calls, all on a worker: it may now run inline
    assert timer.timed(sum, range(10)) == 45
