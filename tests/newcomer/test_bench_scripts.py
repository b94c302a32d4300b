"""The benchmarks leave the tracked docs alone unless given ``--write``, and a benchmark that
measures with perf_analyzer says, before anything else, that it needs one and how to get it;
those comparing ovmsx with itself also run on the project's own REST load generator.

The scripts are run for real (``--help``, up to the perf_analyzer check, or one benchmark in a
tiny run whose figures nobody looks at): no figure is checked, only what the scripts do."""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
DOCS = BENCH.parent / "docs"
# Every script of bench/ that writes figures into docs/ (all through perf_doc).
WRITERS = sorted(
    path.name
    for path in BENCH.glob("*.py")
    if re.search(r"^import perf_doc$|^from perf_doc import", text := path.read_text(), re.M)
    and 'if __name__ == "__main__":' in text
)
# Those that measure with perf_analyzer: they use its runner, directly or through perf_bench.
NEED_PERF_ANALYZER = sorted(
    path.name
    for path in BENCH.glob("bench_*.py")
    if re.search(r"^import perf_bench$|^from perf_analyzer_runner import", path.read_text(), re.M)
)

sys.path.insert(0, str(BENCH))
import perf_doc  # noqa: E402  (a sibling-importing script module, as the benchmarks use it)
from perf_analyzer_runner import require_perf_analyzer  # noqa: E402


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _docs_digest() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(DOCS.iterdir())}


def test_the_lists_hold_what_they_should() -> None:
    assert {"bench_bytes_codec.py", "bench_serving.py", "soak.py"} <= set(WRITERS)
    assert {"bench_serving.py", "bench_metrics.py", "bench_workers.py"} <= set(NEED_PERF_ANALYZER)


def test_only_the_shared_helper_writes_a_section() -> None:
    for path in BENCH.glob("*.py"):
        if path.name != "perf_doc.py":
            assert "write_section(" not in path.read_text(), path.name
    assert not [p.name for p in BENCH.glob("*.py") if "--no-write" in p.read_text()]


@pytest.mark.parametrize("script", WRITERS)
def test_every_writer_offers_write(script: str) -> None:
    done = _run(script, "--help")
    assert done.returncode == 0, done.stderr
    assert "--write" in done.stdout


def _args(doc: Path, write: bool) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    perf_doc.add_write_arguments(parser, doc)
    return parser.parse_args(["--write"] if write else [])


def test_publish_prints_and_leaves_the_doc_alone_without_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\n<!-- x:begin -->\nold\n<!-- x:end -->\n")
    before = doc.read_bytes()
    perf_doc.publish("new figures", "x", _args(doc, write=False))
    assert doc.read_bytes() == before
    printed = capsys.readouterr().out
    assert "new figures" in printed
    assert "rerun with --write" in printed


def test_publish_with_write_replaces_only_its_section(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text(
        "# P\n\n<!-- x:begin -->\nold\n<!-- x:end -->\n\n<!-- y:begin -->\nkept\n<!-- y:end -->\n"
    )
    perf_doc.publish("new figures", "x", _args(doc, write=True))
    assert doc.read_text() == (
        "# P\n\n<!-- x:begin -->\nnew figures\n<!-- x:end -->\n\n"
        "<!-- y:begin -->\nkept\n<!-- y:end -->\n"
    )


def test_a_missing_perf_analyzer_says_how_to_get_one() -> None:
    with pytest.raises(SystemExit) as caught:
        require_perf_analyzer("/nonexistent/perf_analyzer")
    message = str(caught.value)
    assert "'/nonexistent/perf_analyzer' is neither an executable file nor a command on PATH" in (
        message
    )
    assert "pip install perf-analyzer" in message
    assert "glibc 2.38 or newer" in message
    assert "install_perf_analyzer.sh" in message
    assert "--perf-analyzer PATH" in message
    assert (BENCH / "install_perf_analyzer.sh").is_file()


def test_a_perf_analyzer_that_does_not_start_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "perf_analyzer"
    broken.write_text("#!/bin/sh\necho 'version GLIBC_2.38 not found' >&2\nexit 1\n")
    broken.chmod(0o755)
    with pytest.raises(SystemExit) as caught:
        require_perf_analyzer(str(broken))
    assert f"{broken} --version failed (exit 1): version GLIBC_2.38 not found" in str(caught.value)


@pytest.mark.parametrize("script", NEED_PERF_ANALYZER)
def test_benchmarks_without_perf_analyzer_stop_first_and_plainly(script: str) -> None:
    before = _docs_digest()
    done = _run(script, "--perf-analyzer", "/nonexistent/perf_analyzer")
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"{script} measures with Triton's perf_analyzer (its gRPC load generator) and cannot "
        "run it: '/nonexistent/perf_analyzer' is neither an executable file nor a command on PATH."
    ), done.stderr
    assert "Traceback" not in done.stderr
    assert _docs_digest() == before


def test_a_tiny_run_on_the_own_load_generator_prints_and_writes_nothing() -> None:
    """bench_graphs_openvino without perf_analyzer: one short round over REST."""
    before = _docs_digest()
    done = _run(
        "bench_graphs_openvino.py",
        *("--load-generator", "rest_load", "--perf-analyzer", "/nonexistent/perf_analyzer"),
        *("--ovmsx", str(Path(sys.executable).with_name("ovmsx"))),  # this environment's
        *("--rounds", "1", "--measurement-ms", "100", "--concurrency", "1"),
    )
    assert done.returncode == 0, done.stderr
    assert "bench/rest_load.py over KServe REST (binary data both ways)" in done.stdout
    assert "| 1 | " in done.stdout  # the table's one row
    assert "(printed only; rerun with --write to update docs/performance.md)" in done.stdout
    assert _docs_digest() == before


@pytest.mark.parametrize("script", ["bench_graphs.py", "bench_custom_nodes.py"])
def test_benchmarks_that_can_run_on_rest_load_say_so_when_perf_analyzer_is_missing(
    script: str,
) -> None:
    done = _run(script, "--perf-analyzer", "/nonexistent/perf_analyzer")
    assert done.returncode == 1
    assert done.stderr.rstrip().endswith(
        "Or measure over KServe REST with the project's own load generator: "
        "--load-generator rest_load"
    )


def test_bench_peers_names_the_figures_that_moved_beyond_the_spread_of_the_rounds() -> None:
    """A rerun that does not reproduce the published table says so, figure by figure; the
    latency table under it (same rows) and figures within the spread are not named."""
    from peers import report

    header = ["| model | concurrency | ovmsx | Triton |", "|---|---:|---:|---:|"]
    published = [
        *header,
        "| `add_one` [1,10] | 1 | **3,952** | 2,600 (1.52) |",  # older cells: no spread
        "| `py_add_one` (Python code) | 1 | **2,412 (2,300-2,500)** | 2,375 (2,300-2,400), 1.02x |",
        "",
        *header,
        "| `py_add_one` (Python code) | 1 | 0.41 | 0.42 |",
    ]
    rerun = [
        *header,
        "| `add_one` [1,10] | 1 | **3,900 (3,800-4,000)** | 2,650 (2,500-2,700), 1.47x |",
        "| `py_add_one` (Python code) | 1 | **1,583 (1,500-1,700)** | 2,453 (2,400-2,500), 0.65x |",
    ]
    assert report.moved(published, rerun) == [
        "`py_add_one` (Python code) c=1 ovmsx: 2,412 → 1,583 infer/s (-34%; spread of the "
        "rounds 200)"
    ]
    assert report.moved(rerun, rerun) == []
