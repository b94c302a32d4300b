"""What one inference hand-off costs: OpenVINO's own paths against ovmsx's C++ pool.

For a tiny model the work is a few microseconds, so the cost of moving a request to
OpenVINO's worker thread and the result back dominates. This measures, in one process and
one request at a time, on the add_one model ([1,10] FP32):

* OpenVINO ``InferRequest.infer()`` on the calling thread (no hand-off at all);
* OpenVINO ``start_async()`` + ``wait()`` (one hand-off to OpenVINO's thread and back);
* ovmsx ``InferencePool.submit`` -> CompletionQueue eventfd -> ``drain`` (the server's path,
  with the caller sleeping in ``select`` as the event loop does);
* the same two asynchronous paths with the whole process on one CPU, where waking the other
  thread needs no inter-processor interrupt.

Each variant runs in a fresh subprocess (CPU affinity is inherited by OpenVINO's threads when
they are created). With ``--write``, writes the ``bench_dispatch`` section of
docs/performance.md.

    python bench/bench_dispatch.py --write
"""

from __future__ import annotations

import argparse
import json
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_models
import numpy as np
import perf_doc

SECTION = "bench_dispatch"
VARIANTS = ("sync", "ov_async", "ovmsx_pool")


def _measure(variant: str, model_xml: str, count: int) -> float:
    """Median µs per inference over 5 batches of ``count``."""
    import openvino as ov

    from ovmsx import Tensor, _core

    data = np.ones((1, 10), np.float32)
    config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"}
    if variant == "ovmsx_pool":
        compiled = _core.ModelSource.read(model_xml).compile("CPU", config)
        queue = _core.CompletionQueue()
        pool = _core.InferencePool(compiled, 1, queue)
        inputs = [Tensor("INPUT", data)]

        def once() -> None:
            pool.submit(0, inputs)
            select.select([queue.fd], [], [])
            queue.drain()
    else:
        request = ov.Core().compile_model(model_xml, "CPU", config).create_infer_request()
        request.set_input_tensor(ov.Tensor(data))
        if variant == "sync":
            once = request.infer
        else:

            def once() -> None:
                request.start_async()
                request.wait()

    batches = []
    for _ in range(6):
        start = time.perf_counter()
        for _ in range(count):
            once()
        batches.append((time.perf_counter() - start) / count * 1e6)
    return statistics.median(batches[1:])  # the first batch warms up


def _run(variant: str, model_xml: Path, count: int, one_cpu: bool) -> float:
    command = [sys.executable, __file__, "--child", variant, str(model_xml), str(count)]
    if one_cpu:
        command = ["taskset", "-c", "0", *command]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--count", type=int, default=3000)
    perf_doc.add_write_arguments(parser)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        variant, model_xml, count = args.child
        print(json.dumps(_measure(variant, model_xml, int(count))))
        return

    with tempfile.TemporaryDirectory(prefix="bench_dispatch-") as tmp:
        model_xml = bench_models.build_add_one(Path(tmp)).model_file
        rows = []
        for variant in VARIANTS:
            spread = _run(variant, model_xml, args.count, one_cpu=False)
            pinned = _run(variant, model_xml, args.count, one_cpu=True)
            rows.append((variant, spread, pinned))
    labels = {
        "sync": "OpenVINO `infer()` on the caller's thread",
        "ov_async": "OpenVINO `start_async()` + `wait()`",
        "ovmsx_pool": "ovmsx pool: `submit` → eventfd → `drain`",
    }
    lines = [
        "## One inference hand-off (add_one, in-process, one request at a time)",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {perf_doc.machine(('openvino', 'ovmsx'))}.",
        "Rerun with `python bench/bench_dispatch.py --write`.",
        "",
        "| Path | µs per inference, threads on both CPUs | µs, process on one CPU |",
        "|---|---:|---:|",
        *(f"| {labels[v]} | {a:.1f} | {b:.1f} |" for v, a, b in rows),
        "",
        "- The add itself takes the first row's time. Every asynchronous path pays for waking a "
        "sleeping thread on the other CPU twice (OpenVINO's worker, then the waiting caller); "
        "the one-CPU column shows the same paths without the cross-CPU wake-ups.",
    ]
    perf_doc.publish("\n".join(lines), SECTION, args)


if __name__ == "__main__":
    main()
