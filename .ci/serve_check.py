"""Start ovmsx on the bundled example config and serve one request over gRPC and one over REST,
with whatever the current environment holds: CI runs it in venvs that install ovmsx beside
clients that move its dependencies (.ci/compat). Exits non-zero, with the server's log, if the
server does not start, a request fails, or the server logs a traceback.

    python .ci/serve_check.py [--expect-transport core|aio] [--expect-log TEXT]
                              [--client-python PATH]
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READY_SECONDS = 120
FALLBACK = "gRPC is served on grpc.aio"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_ready(rest: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{rest}/v2/health/ready", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the server was not ready within {READY_SECONDS} s")


def rest_infer(rest: int) -> list[float]:
    body = {"inputs": [{"name": "INPUT", "shape": [1, 10], "datatype": "FP32",
                        "data": list(range(10))}]}  # fmt: skip
    request = urllib.request.Request(
        f"http://127.0.0.1:{rest}/v2/models/add_one/infer", data=json.dumps(body).encode()
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)["outputs"][0]["data"]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--expect-transport", choices=("core", "aio"))
    parser.add_argument("--expect-log", help="text the server's log must hold")
    parser.add_argument(
        "--client-python", default=sys.executable, help="the Python that runs the example client"
    )
    args = parser.parse_args()
    grpc_port, rest_port = free_port(), free_port()
    log = ROOT / "build" / "serve_check.log"
    log.parent.mkdir(exist_ok=True)
    command = ["ovmsx", "--config_path", str(ROOT / "examples" / "config.json"),
               "--port", str(grpc_port), "--rest_port", str(rest_port)]  # fmt: skip
    with open(log, "wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_ready(rest_port, server)
        client = ROOT / "examples" / "add_one" / "client.py"
        subprocess.run([args.client_python, str(client), "--url", f"127.0.0.1:{grpc_port}"],
                       check=True, timeout=60)  # fmt: skip
        assert rest_infer(rest_port) == [float(i + 1) for i in range(10)]
    except BaseException:
        print(log.read_text(), file=sys.stderr)
        raise
    finally:
        server.terminate()
        server.wait(timeout=60)
    text = log.read_text()
    if "Traceback" in text:
        print(text, file=sys.stderr)
        raise SystemExit("the server logged a traceback")
    fell_back = FALLBACK in text
    if args.expect_transport and fell_back != (args.expect_transport == "aio"):
        print(text, file=sys.stderr)
        raise SystemExit(f"expected the {args.expect_transport} transport")
    if args.expect_log and args.expect_log not in text:
        print(text, file=sys.stderr)
        raise SystemExit(f"the server's log does not say {args.expect_log!r}")
    print(f"served on the {'aio' if fell_back else 'core'} transport: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
