"""``ovmsx-wait-ready``: wait until a server started in the background is ready, so that the
next command of a pasted block (a client, a curl) does not run before it listens.

    ovmsx --config_path examples/config.json --port 9000 &
    ovmsx-wait-ready --port 9000
    python examples/add_one/client.py --url 127.0.0.1:9000

``--port`` asks KServe's gRPC ``ServerReady``, ``--rest_port`` ``GET /v2/health/ready``; both
may be given. Exit 0 once every one answers ready, 1 at ``--timeout`` seconds (120) with what
was last seen.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.error
import urllib.request

POLL_S = 0.2
# KServe's ServerReady: an empty request; the response's field 1 (bool) true is 08 01.
_SERVER_READY = "/inference.GRPCInferenceService/ServerReady"
_READY = b"\x08\x01"


def _rest_ready(host: str, port: int) -> str | None:
    """None when ready, else what was seen."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/v2/health/ready", timeout=2) as reply:
            return None if reply.status == 200 else f"HTTP {reply.status}"
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except OSError as error:
        return str(getattr(error, "reason", error))


def _grpc_ready(host: str, port: int) -> str | None:
    import grpc

    with grpc.insecure_channel(f"{host}:{port}") as channel:
        call = channel.unary_unary(_SERVER_READY)
        try:
            answer = call(b"", timeout=2)
        except grpc.RpcError as error:
            return f"{error.code().name}: {error.details()}"
    return None if answer == _READY else "not ready"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ovmsx-wait-ready", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, help="the server's gRPC port")
    parser.add_argument("--rest_port", type=int, help="the server's REST port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds (120)")
    args = parser.parse_args(argv)
    checks = []
    if args.port:
        checks.append(("gRPC", args.port, _grpc_ready))
    if args.rest_port:
        checks.append(("REST", args.rest_port, _rest_ready))
    if not checks:
        parser.error("give --port, --rest_port or both")
    deadline = time.monotonic() + args.timeout
    while checks:
        name, port, check = checks[0]
        seen = check(args.host, port)
        if seen is None:
            checks.pop(0)
            continue
        if time.monotonic() > deadline:
            print(f"ovmsx-wait-ready: {name} port {port} not ready: {seen}", file=sys.stderr)
            return 1
        time.sleep(POLL_S)
    return 0


if __name__ == "__main__":
    sys.exit(main())
