"""Chat images fetched over HTTP: urllib3 (what ovmsx/genai/vision/image_sources.py uses)
against httpx, each reading the body in pieces under the same size cap, from a loopback server,
one image after another on a kept-alive connection, rounds alternating.

    python bench/bench_image_download.py           # ~20 s; prints the figures
    python bench/bench_image_download.py --write   # and rewrites its section of docs/performance.md

Both are well-kept clients; urllib3 is already in every ovmsx install (boto3 needs it), httpx
would be a new dependency of the server. The question is whether either costs a request time
that matters next to decoding the image.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
import urllib3
from perf_doc import add_write_arguments, machine, publish

CAP = 20_000_000
PIECE = 1 << 16
SECTION = "image-download"


class _Body(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a client fetching several images gets
    body = b""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # http.server's name for a GET handler
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


def _urllib3(pool: urllib3.PoolManager, url: str) -> int:
    response = pool.request("GET", url, preload_content=False, redirect=False, retries=False)
    size = 0
    chunks = []
    while chunk := response.read1(PIECE):
        size += len(chunk)
        if size > CAP:
            raise RuntimeError("over the cap")
        chunks.append(chunk)
    response.release_conn()
    return len(b"".join(chunks))


def _httpx(client: httpx.Client, url: str) -> int:
    size = 0
    chunks = []
    with client.stream("GET", url) as response:
        for chunk in response.iter_raw(PIECE):
            size += len(chunk)
            if size > CAP:
                raise RuntimeError("over the cap")
            chunks.append(chunk)
    return len(b"".join(chunks))


def _round(fetch, client, url: str, count: int) -> float:
    """Milliseconds per image over ``count`` fetches."""
    start = time.perf_counter()
    for _ in range(count):
        fetch(client, url)
    return (time.perf_counter() - start) * 1000 / count


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="100000,2000000,10000000", help="image bytes")
    add_write_arguments(parser)
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Body)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/image"
    pool = urllib3.PoolManager()
    client = httpx.Client(timeout=10.0)
    contenders = {"urllib3": (_urllib3, pool), "httpx": (_httpx, client)}
    rows = []
    for size in (int(text) for text in args.sizes.split(",")):
        _Body.body = bytes(size)
        count = max(5, 200_000_000 // max(size, 1) // 20)
        results: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.rounds):
            for name, (fetch, handle) in contenders.items():  # alternating, round by round
                results[name].append(_round(fetch, handle, url, count))
        base = statistics.median(results["urllib3"])
        for name, times in results.items():
            median = statistics.median(times)
            rows.append(
                f"| {size / 1e6:g} MB | {name} | {median:.2f} ({min(times):.2f}-{max(times):.2f}) "
                f"| {median / base:.2f}x |"
            )
    server.shutdown()
    text = "\n".join(
        [
            "## Chat images over HTTP (bench/bench_image_download.py)",
            "",
            "One image after another from a loopback server on a kept-alive connection, the body "
            f"read in {PIECE // 1024} KiB pieces under the 20 MB cap; ms per image, median of "
            f"{args.rounds} rounds (range), clients alternating. ratio: time / urllib3's.",
            "",
            "| image | client | ms per image | ratio |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Machine: {machine(['urllib3', 'httpx'])}.",
            "Rerun with `python bench/bench_image_download.py --write`.",
        ]
    )
    publish(text, SECTION, args)


if __name__ == "__main__":
    main()
