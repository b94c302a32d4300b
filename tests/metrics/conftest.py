"""The metrics tests start real servers with the serving tests' helpers (``serving_process``:
ovmsx as a subprocess on a free loopback port; ``serving_models``: small OpenVINO models;
``serving_pipelines`` and ``serving_graphs``), which live beside the serving tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serving"))
