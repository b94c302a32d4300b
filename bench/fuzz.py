"""Run ovmsx's fuzz targets (tests/fuzz) with atheris, for a count or for as long as asked.

    python bench/fuzz.py model_infer --runs 2000
    python bench/fuzz.py all --seconds 60          # each target for 60 s, one after the other
    python bench/fuzz.py images --seconds 600 -- -max_len=65536

Each target runs in a process of its own (libFuzzer ends the process when it is done), started
with its seed corpus in a scratch folder; ovmsx's Python modules are instrumented, so atheris
steers by their coverage (the C++ core is driven, not instrumented). An input that breaks the
target's contract (tests/fuzz/fuzz_contract.py), crashes the process, runs past ``--timeout``
or takes memory past ``--rss-limit-mb`` is written to ``--artifacts`` and ends that target with
a non-zero status. At the end, one line per target: inputs tried, seconds, outcome.
"""

from __future__ import annotations

import argparse
import gc
import re
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FUZZ_DIR = ROOT / "tests" / "fuzz"
# The targets import the serving tests' model builders and the request generator.
IMPORT_PATHS = [FUZZ_DIR, ROOT / "tests" / "serving", ROOT / "bench"]
DONE = re.compile(rb"Done (\d+) runs in (\d+) second")
INSTRUMENTED_TARGETS = ["targets_serving", "targets_parsers", "targets_custom_node"]
PROGRESS = re.compile(rb"^#(\d+)\s")


def _target_names() -> list[str]:
    sys.path[:0] = [str(p) for p in IMPORT_PATHS]
    from fuzz_targets import TARGETS

    return list(TARGETS)


def run_child(name: str, workdir: Path, libfuzzer_args: list[str]) -> None:
    """In the target's own process: set it up with ovmsx instrumented, write the seeds, fuzz."""
    import atheris

    sys.path[:0] = [str(p) for p in IMPORT_PATHS]
    from fuzz_targets import TARGETS, fuzz_function

    function = fuzz_function(name, workdir)
    _instrument(atheris, ("ovmsx", *INSTRUMENTED_TARGETS))
    corpus = workdir / "corpus"
    corpus.mkdir()
    for index, seed in enumerate(TARGETS[name].seeds()):
        (corpus / f"seed-{index:03d}").write_bytes(seed)
    atheris.Setup([sys.argv[0], *libfuzzer_args, str(corpus)], function)
    atheris.Fuzz()


def _instrument(atheris, prefixes: tuple[str, ...]) -> None:
    """Add coverage to every loaded function of these modules. (``instrument_imports`` cannot:
    an editable install imports ovmsx through a loader of its own.) The seeds are kept
    whatever their coverage (``-keep_seed``), since the C++ core they reach shows none."""
    for item in gc.get_objects():
        if isinstance(item, types.FunctionType) and (item.__module__ or "").startswith(prefixes):
            atheris.instrument_func(item)


def fuzz_one(name: str, args: argparse.Namespace) -> tuple[int, float, int]:
    """(inputs tried, seconds, exit status) of one target, its output passed through."""
    artifacts = Path(args.artifacts).resolve()
    artifacts.mkdir(parents=True, exist_ok=True)
    libfuzzer = [
        f"-timeout={args.timeout}",
        f"-rss_limit_mb={args.rss_limit_mb}",
        f"-artifact_prefix={artifacts}/{name}-",
        "-print_final_stats=1",
        "-keep_seed=1",
        "-use_value_profile=1",
        *args.libfuzzer,
    ]
    libfuzzer.append(f"-runs={args.runs}" if args.runs else f"-max_total_time={args.seconds}")
    start = time.perf_counter()
    tried = 0
    with tempfile.TemporaryDirectory(prefix=f"ovmsx-fuzz-{name}-") as workdir:
        command = [sys.executable, __file__, "--child", name, "--workdir", workdir, "--",
                   *libfuzzer]  # fmt: skip
        child = subprocess.Popen(command, stderr=subprocess.PIPE)
        assert child.stderr is not None
        for line in child.stderr:
            sys.stderr.buffer.write(line)
            done = DONE.search(line)
            progress = PROGRESS.match(line)
            if done:
                tried = int(done.group(1))
            elif progress:
                tried = max(tried, int(progress.group(1)))
        status = child.wait()
    return tried, time.perf_counter() - start, status


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("target", help="a target name, or 'all'")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--runs", type=int, help="inputs to try per target")
    budget.add_argument("--seconds", type=int, default=60, help="seconds per target (default)")
    parser.add_argument("--timeout", type=int, default=20, help="seconds one input may take")
    parser.add_argument("--rss-limit-mb", type=int, default=2048, help="memory a process may use")
    parser.add_argument("--artifacts", default=str(ROOT / "build" / "fuzz-artifacts"),
                        help="where inputs that broke a target are written")  # fmt: skip
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.libfuzzer = argv[cut + 1 :]  # extra libFuzzer arguments, after --
    if args.child:
        run_child(args.target, Path(args.workdir), args.libfuzzer)
        return 0  # not reached: libFuzzer exits the process
    names = _target_names()
    chosen = names if args.target == "all" else [args.target]
    unknown = [n for n in chosen if n not in names]
    if unknown:
        parser.error(f"unknown target {unknown[0]!r}; targets: {', '.join(names)}, all")
    results = {name: fuzz_one(name, args) for name in chosen}
    print(f"{'target':<12} {'inputs':>10} {'seconds':>8}  outcome")
    for name, (tried, seconds, status) in results.items():
        outcome = "ok" if status == 0 else f"FAILED (exit {status})"
        print(f"{name:<12} {tried:>10} {seconds:>8.1f}  {outcome}")
    return 0 if all(status == 0 for _, _, status in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
