"""The REST tests start real servers with the serving tests' helpers (``serving_process``:
ovmsx as a subprocess on a free loopback port; ``serving_models``: small OpenVINO models),
which live beside the serving tests; ``rest_servables`` builds what they serve.

One server serves every test module that only sends requests (``rest``); tests about the
process itself (flags, start, readiness, metrics) start servers of their own.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serving"))

from rest_process import RestProcess, rest_served
from rest_servables import write_servables


@pytest.fixture(scope="session")
def rest_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_servables(tmp_path_factory.mktemp("rest_servables"))


@pytest.fixture(scope="session")
def rest(rest_config: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestProcess]:
    """The shared server (gRPC and REST); at the end it must stop on SIGTERM with exit code 0."""
    with rest_served(
        ["--config_path", str(rest_config)], tmp_path_factory.mktemp("rest")
    ) as process:
        yield process
