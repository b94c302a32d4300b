"""Drive Triton's perf_analyzer against any KServe v2 gRPC server and read back its figures.

--service-kind=dynamic_grpc sends a fixed, pre-serialized ModelInferRequest to
inference.GRPCInferenceService/ModelInfer, so the server needs nothing Triton-specific (no
model config or statistics RPCs). The request comes from infer_request_gen.py. dynamic_grpc
does not look at the reply status: check the server's answer with a real client first.
"""

from __future__ import annotations

import csv
import json
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from infer_request_gen import DEFAULT_SEED, InputSpec
from perf_doc import shown

GENERATOR = Path(__file__).resolve().parent / "infer_request_gen.py"
INSTALLER = Path(__file__).resolve().parent / "install_perf_analyzer.sh"
GRPC_METHOD = "inference.GRPCInferenceService/ModelInfer"
# The PyPI wheel perf-analyzer is tagged manylinux_2_38: pip refuses it on an older glibc.
WHEEL_GLIBC = (2, 38)


@dataclass(frozen=True)
class Result:
    """One stable measurement window set at one concurrency (latencies in microseconds)."""

    concurrency: int
    throughput_infer_per_s: float
    p50_us: float
    p99_us: float
    avg_us: float


class PerfAnalyzerError(RuntimeError):
    pass


def require_perf_analyzer(command: str, alternative: str = "") -> str:
    """The path of a perf_analyzer that starts, or ``SystemExit`` saying how to get one.

    Benchmarks call this before they build models or start servers, so that a missing load
    generator is the first thing they say, not a ``FileNotFoundError`` minutes later.
    ``alternative``: the flag that runs the benchmark without perf_analyzer, if it has one."""
    found = shutil.which(command)
    if found is None:
        problem = f"{command!r} is neither an executable file nor a command on PATH"
    else:
        try:
            run = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            problem = f"{found} does not start: {error}"
        else:
            if run.returncode == 0:
                return found
            last = (run.stderr or run.stdout).strip().splitlines()[-1:] or [""]
            problem = f"{found} --version failed (exit {run.returncode}): {last[0]}"
    raise SystemExit(how_to_get_perf_analyzer(problem, alternative))


def how_to_get_perf_analyzer(problem: str, alternative: str = "") -> str:
    """What a benchmark says when it has no runnable perf_analyzer."""
    script = Path(sys.argv[0]).name
    libc, version = platform.libc_ver()
    here = f"this system has {libc} {version}" if libc else "this system's C library is unknown"
    wheel = ".".join(map(str, WHEEL_GLIBC))
    return (
        f"{script} measures with Triton's perf_analyzer (its gRPC load generator) and "
        f"cannot run it: {problem}.\n"
        "Get one, then give its path with --perf-analyzer PATH (or put it on PATH):\n"
        f"  pip install perf-analyzer    # Linux x86_64 with glibc {wheel} or newer ({here})\n"
        f"  bash {shown(INSTALLER)}    # older glibc (Debian 12): the same wheel, run with a "
        "newer glibc of its own under ~/.cache/perf-analyzer; prints the path to pass"
        + (
            f"\nOr measure over KServe REST with the project's own load generator: {alternative}"
            if alternative
            else ""
        )
    )


def input_data_json(model: str, inputs: Sequence[InputSpec], seed: int) -> str:
    command = shlex.join(
        [sys.executable, str(GENERATOR), model, *map(str, inputs), "--seed", str(seed)]
    )
    return json.dumps({"data": [{"message_generator": command}]})


def parse_csv(path: Path) -> list[Result]:
    """Rows of perf_analyzer's ``-f`` file written with ``--verbose-csv``."""
    with path.open(newline="") as f:
        return [
            Result(
                concurrency=int(row["Concurrency"]),
                throughput_infer_per_s=float(row["Inferences/Second"]),
                p50_us=float(row["p50 latency"]),
                p99_us=float(row["p99 latency"]),
                # Only --verbose-csv has this column for dynamic_grpc.
                avg_us=float(row["Avg latency"]),
            )
            for row in csv.DictReader(f)
        ]


def perf_analyzer_command(
    binary: str,
    url: str,
    model: str,
    data: Path,
    concurrency: int,
    measurement_ms: int,
    out: Path,
    *,
    stability_percent: float,
    max_trials: int,
) -> list[str]:
    """One synchronous ``dynamic_grpc`` run at ``concurrency``, sending ``data`` (made by
    ``input_data_json``) and writing its figures to the CSV ``out``."""
    return [
        binary,
        *("-m", model, "-u", url),
        "--service-kind=dynamic_grpc",
        f"--grpc-method={GRPC_METHOD}",
        f"--input-data={data}",
        f"--concurrency-range={concurrency}:{concurrency}",
        f"--measurement-interval={measurement_ms}",
        f"--stability-percentage={stability_percent:g}",
        f"--max-trials={max_trials}",
        *("-f", str(out), "--verbose-csv"),
    ]


def run_perf_analyzer(
    binary: str,
    url: str,
    model: str,
    inputs: Sequence[InputSpec],
    concurrency_values: Iterable[int],
    measurement_ms: int,
    *,
    stability_percent: float = 20.0,
    max_trials: int = 10,
    seed: int = DEFAULT_SEED,
) -> list[Result]:
    """One perf_analyzer run per concurrency value, each with synchronous requests.

    perf_analyzer repeats ``measurement_ms`` windows until three in a row agree within
    ``stability_percent`` (its default, 10 %, is rarely met at concurrency 4 on a 2-core machine
    that also runs the server), giving up after ``max_trials`` windows.
    """
    results = []
    with tempfile.TemporaryDirectory(prefix="perf_analyzer-") as tmp:
        data = Path(tmp, "input.json")
        data.write_text(input_data_json(model, inputs, seed))
        for concurrency in concurrency_values:
            out = Path(tmp, f"c{concurrency}.csv")
            command = perf_analyzer_command(
                binary, url, model, data, concurrency, measurement_ms, out,
                stability_percent=stability_percent, max_trials=max_trials,
            )  # fmt: skip
            # Generous: every window of every trial, plus the generator and start-up.
            timeout = max_trials * measurement_ms * 3 / 1000 + 60
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
            rows = parse_csv(out) if run.returncode == 0 and out.exists() else []
            if not rows:
                log = (run.stdout + run.stderr).strip().splitlines()
                raise PerfAnalyzerError(
                    f"perf_analyzer failed at concurrency {concurrency} (exit {run.returncode}):\n"
                    + "\n".join(log[-15:])
                )
            results.extend(rows)
    return results


def measure_round(
    binary: str,
    url: str,
    contenders: Mapping[str, Sequence[InputSpec]],
    round_number: int,
    concurrency_values: Iterable[int],
    measurement_ms: int,
    stability_percent: float,
    rates: dict[tuple[str, int], list[float]],
) -> None:
    """One round over every contender (servable name -> its inputs), in reverse order on odd
    rounds so that drift hits all alike; appends each throughput to ``rates[(name, c)]``."""
    names = list(contenders)
    for name in names if round_number % 2 == 0 else names[::-1]:
        results = run_perf_analyzer(
            binary,
            url,
            name,
            contenders[name],
            concurrency_values,
            measurement_ms,
            stability_percent=stability_percent,
        )
        for result in results:
            rates.setdefault((name, result.concurrency), []).append(result.throughput_infer_per_s)
        print(f"round {round_number + 1} {name}: {results}", file=sys.stderr)
