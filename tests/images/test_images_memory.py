"""Refused image requests leave no memory behind, and a request announcing few images while
sending millions of elements is refused before they are looked at one by one."""

from __future__ import annotations

import time

import grpc
from image_files import jpeg, picture
from image_requests import raw_infer, rpc_error
from rest_process import RestProcess

MIB = 1 << 20
REPEATS = 10
GROWTH_LIMIT = 60 * MIB  # well under REPEATS decoded batches (~18 MiB each)
ELEMENTS = 5_000_000  # empty elements: 20 MB of length prefixes


def _status_kib(server: RestProcess, field: str) -> int:
    with open(f"/proc/{server.process.pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/<pid>/status")


def _rss(server: RestProcess) -> int:
    return _status_kib(server, "VmRSS") * 1024


def test_refused_batches_of_big_images_free_their_memory(image_server: RestProcess) -> None:
    # Two full-HD images decode (~6 MiB each), then the third is gray: a channel error.
    big = jpeg(picture(1080, 1920, seed=41))
    gray = jpeg(picture(1080, 1920, channels=1, seed=42))
    buffer = b"".join(len(image).to_bytes(4, "little") + image for image in (big, big, gray))

    def send() -> None:
        error = rpc_error(raw_infer, image_server.port, "u8_batch3", buffer, [3])
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error.details().startswith("Invalid number of channels in binary input")

    send()  # warms the allocator and the decoding threads
    before = _rss(image_server)
    for _ in range(REPEATS):
        send()
    growth = _rss(image_server) - before
    deadline = time.monotonic() + 1.0  # memory may come back just after the answer
    while growth >= GROWTH_LIMIT and time.monotonic() < deadline:
        time.sleep(0.05)
        growth = min(growth, _rss(image_server) - before)
    assert growth < GROWTH_LIMIT, f"{growth >> 20} MiB kept after {REPEATS} refused batches"


def test_millions_of_elements_against_a_small_shape_are_refused_cheaply(
    image_server: RestProcess,
) -> None:
    buffer = bytes(4 * ELEMENTS)
    before = _rss(image_server)
    with open(f"/proc/{image_server.process.pid}/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM to the current resident size (proc(5))
    error = rpc_error(raw_infer, image_server.port, "u8_any", buffer, [3])
    peak = _status_kib(image_server, "VmHWM") * 1024 - before
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("Invalid input batch size"), error.details()
    assert f"holds {ELEMENTS} elements" in error.details()
    # A view per element would take ~200 bytes each: a gigabyte.
    assert peak < 2 * len(buffer) + 64 * MIB, f"peak {peak >> 20} MiB"
