"""A pytest plugin for .ci/sanitize: the time budgets of ovmsx's fast paths, scaled to the
sanitized build.

ovmsx takes its cheap paths (a model inferred on the event loop, a custom node or Python
calculator called inline) only while the measured average call stays under a budget of
microseconds. The sanitized build runs the same calls several times slower, so without this the
tests that drive those paths would see them never taken, and the C++ behind them would not run
under the sanitizers. Only the pytest process is affected; servers the tests start keep the
real budgets.
"""

from __future__ import annotations

import pytest

import ovmsx.graph.calculator
import ovmsx.pipeline.custom_call
import ovmsx.servables.model_loader

# Enough for the sanitized calls, several times slower; small enough that a call of
# milliseconds (test_custom_node_caller's slow node) still counts as slow.
SLOWDOWN = 10


def pytest_configure(config: pytest.Config) -> None:
    ovmsx.servables.model_loader.QUICK_INFERENCE_S *= SLOWDOWN
    ovmsx.pipeline.custom_call.INLINE_BUDGET_S *= SLOWDOWN
    ovmsx.graph.calculator.USER_CODE_INLINE_BUDGET_S *= SLOWDOWN
