"""The fault tests start real servers with the serving tests' helpers (``serving_process``,
``serving_models``, ``serving_graphs``, ``serving_pipelines``), the REST tests'
``rest_process`` and the reload tests' ``reload_world``, which live beside those tests;
``fault_world`` builds what they serve."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]
for folder in ("serving", "rest", "reload"):
    if str(_TESTS / folder) not in sys.path:
        sys.path.insert(0, str(_TESTS / folder))
