"""The reload tests start real servers with the serving tests' helpers (``serving_process``,
``serving_models``, ``serving_pipelines``) and the REST tests' ``rest_process``, which live beside
those tests; ``reload_world`` writes the files a config points at and rewrites them while the
server runs."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]
for folder in ("serving", "rest"):
    if str(_TESTS / folder) not in sys.path:
        sys.path.insert(0, str(_TESTS / folder))
