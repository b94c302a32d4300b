"""Every fuzz target runs for a bounded count, as CI does, in a process of its own through
``bench/fuzz.py``: it must end with status 0 (no input broke the contract) having tried them
all. The counts keep all targets together well under three minutes on two cores; run
``python bench/fuzz.py all --seconds 300`` to fuzz for longer.

Here the fuzzer runs with a fixed seed and a fixed hash seed, so every run of the suite tries
the same inputs: a test that found something new at random would fail one run in a few and
pass the next. Finding new inputs is bench/fuzz.py's job, whose runs are seeded at random;
what they find becomes a test of its own in test_fuzz_findings.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = 1

# Inputs per target: the seeds plus mutations. The slower targets (a model or a decoder per
# input) get fewer.
RUNS = {
    "model_infer": 30000,
    "rest_infer": 40000,
    "bytes": 100000,
    "images": 5000,
    "graph": 20000,
    "config": 100000,
    "custom_node": 100000,
}


@pytest.mark.parametrize(("target", "runs"), RUNS.items())
def test_target_keeps_its_contract(target: str, runs: int, tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "bench" / "fuzz.py"), target, "--runs", str(runs),
               "--artifacts", str(tmp_path), "--", f"-seed={SEED}"]  # fmt: skip
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=environment)
    found = sorted(p.name for p in tmp_path.iterdir())
    assert done.returncode == 0, f"{target} found {found}:\n{done.stderr[-6000:]}"
    summary = re.search(rf"^{target}\s+(\d+)\s", done.stdout, re.MULTILINE)
    assert summary is not None, done.stdout
    assert int(summary.group(1)) == runs


def test_every_target_is_run_here() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from fuzz_targets import TARGETS

    assert set(TARGETS) == set(RUNS)
