"""Start and stop ovmsx over and over on the REST tests' servables (ten models, graphs and a
pipeline loading at once) and count the starts that crash: how a rare fault at load shows.

    python bench/restart_loop.py --starts 150

Each start runs for --seconds (long enough to load everything), then gets SIGTERM. A start
counts as crashed when the process ends by a signal other than SIGTERM, or prints 'terminate
called'; its last lines and Python's fault handler's tracebacks are printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "rest"), str(ROOT / "tests" / "serving")]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--starts", type=int, default=150)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    from rest_servables import write_servables
    from serving_process import free_port

    environment = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    crashed = 0
    with tempfile.TemporaryDirectory(prefix="ovmsx-restarts-") as scratch:
        config = write_servables(Path(scratch))
        for start in range(args.starts):
            command = [sys.executable, "-m", "ovmsx", "--config_path", str(config),
                       "--port", str(free_port()), "--rest_port", str(free_port()),
                       "--grpc_bind_address", "127.0.0.1"]  # fmt: skip
            server = subprocess.Popen(command, cwd=scratch, env=environment,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
            began = time.monotonic()
            while time.monotonic() - began < args.seconds and server.poll() is None:
                time.sleep(0.1)
            if server.poll() is None:
                server.terminate()
            output = server.communicate()[0]
            if b"terminate called" in output or server.returncode not in (0, -15):
                crashed += 1
                print(f"start {start}: exit {server.returncode}", flush=True)
                print(output[-4000:].decode(errors="replace"), flush=True)
    print(f"{crashed} of {args.starts} starts crashed")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
