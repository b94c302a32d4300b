"""The pipeline-detail tests start real servers with the serving tests' helpers
(``serving_process``, ``serving_models``, ``serving_pipelines``, ``serving_graphs``) and the REST
tests' ``rest_process`` (for the config API), which live beside those tests."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]
for folder in ("serving", "rest"):
    if str(_TESTS / folder) not in sys.path:
        sys.path.insert(0, str(_TESTS / folder))
