"""The bench_peers section of docs/performance.md: throughput, latency and memory tables."""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from perf_analyzer_runner import Result

from .contenders import COLUMNS, Contender

MIB = 1 << 20
ROW_TITLES = {
    "add_one": "`add_one` [1,10]",
    "identity": "`identity` [1,3,224,224]",
    "ocr_det": "`ocr_det` CNN 1x3x640x640",
    "py_add_one": "`py_add_one` (Python code)",
}
SERVER_TITLES = {"ovmsx": "ovmsx", "triton": "Triton", "kserve": "KServe", "mlserver": "MLServer"}


@dataclass
class Memory:
    """One server's memory, in bytes."""

    processes: int = 0
    models: int = 0
    base_rss: int = 0  # serving add_one alone, idle
    base_pss: int = 0
    rss: int = 0  # serving every model, idle after one request each
    pss: int = 0
    peak_rss: dict[str, int] | None = None  # group -> highest RSS during its top-concurrency runs


def median(results: Sequence[Result], field: str) -> float:
    return statistics.median(getattr(r, field) for r in results)


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _ms(us: float) -> str:
    return f"{us / 1000:.2f}" if us < 10_000 else f"{us / 1000:.1f}"


def _table(
    rows: dict[str, list[Contender]],
    concurrency: Sequence[int],
    runs: dict[tuple[str, str, int], list[Result]],
    cell: Callable[[str, list[Result], list[Result] | None], str],
) -> list[str]:
    used = [c for c in COLUMNS if any(m.column == c for ms in rows.values() for m in ms)]
    lines = [
        "| model | concurrency | " + " | ".join(used) + " |",
        "|---|---:|" + "---:|" * len(used),
    ]
    for row, members in rows.items():
        by_column = {m.column: m for m in members}
        for c in concurrency:
            ovmsx = runs.get((by_column["ovmsx"].server, by_column["ovmsx"].model, c))
            cells = []
            for column in used:
                member = by_column.get(column)
                results = member and runs.get((member.server, member.model, c))
                cells.append(cell(column, results, ovmsx) if results else "—")
            lines.append(f"| {ROW_TITLES[row]} | {c} | " + " | ".join(cells) + " |")
    return lines


def _spread(results: list[Result]) -> str:
    rates = [r.throughput_infer_per_s for r in results]
    return f"{_rate(statistics.median(rates))} ({_rate(min(rates))}-{_rate(max(rates))})"


def throughput_table(rows, concurrency, runs) -> list[str]:
    def cell(column: str, results: list[Result], ovmsx: list[Result] | None) -> str:
        if column == "ovmsx":
            return f"**{_spread(results)}**"
        if not ovmsx:
            return _spread(results)
        rate = median(results, "throughput_infer_per_s")
        return f"{_spread(results)}, {median(ovmsx, 'throughput_infer_per_s') / rate:.2f}x"

    return _table(rows, concurrency, runs, cell)


def latency_table(rows, concurrency, runs) -> list[str]:
    return _table(rows, concurrency, runs, lambda _, results, __: _ms(median(results, "p50_us")))


def memory_table(memory: dict[str, Memory], groups: Sequence[str], top: int) -> list[str]:
    def mib(value: int) -> str:
        return f"{value / MIB:,.0f}"

    lines = [
        "| server | processes | models | RSS / PSS, `add_one` alone | RSS / PSS, all models "
        "| RSS / PSS per further model | "
        + " | ".join(f"peak RSS, `{g}` at c={top}" for g in groups)
        + f" | RSS per in-flight request at c={top} |",
        "|---|---:|---:|---:|---:|---:|" + "---:|" * len(groups) + "---:|",
    ]
    for server, m in memory.items():
        further = "—"
        if m.models > 1:
            n = m.models - 1
            further = f"{mib((m.rss - m.base_rss) // n)} / {mib((m.pss - m.base_pss) // n)}"
        peaks = m.peak_rss or {}
        peak_cells = [mib(peaks[g]) if g in peaks else "—" for g in groups]
        # A peak below the idle figure (memory handed back to the OS meanwhile) counts as 0.
        growth = max(max(peaks.values()) - m.rss, 0) if peaks else None
        in_flight = "—" if growth is None else f"{growth / top / MIB:.1f}"
        lines.append(
            f"| {SERVER_TITLES[server]} | {m.processes} | {m.models} "
            f"| {mib(m.base_rss)} / {mib(m.base_pss)} | {mib(m.rss)} / {mib(m.pss)} "
            f"| {further} | " + " | ".join(peak_cells) + f" | {in_flight} |"
        )
    return lines


# A throughput cell as throughput_table writes it: the median, then the rounds' range (older
# tables had the median alone).
_CELL = re.compile(r"\*{0,2}([\d,.]+)(?: \(([\d,.]+)-([\d,.]+)\))?")


def _figures(cell: str) -> tuple[float, float, float] | None:
    """(median, lowest, highest) of a throughput cell; None for an empty one."""
    found = _CELL.match(cell.strip())
    if found is None:
        return None
    median_, low, high = (
        float(value.replace(",", "")) if value else None for value in found.groups()
    )
    return median_, low if low is not None else median_, high if high is not None else median_


def throughput_cells(table: Sequence[str]) -> dict[tuple[str, str, str], tuple]:
    """The figures of a throughput table's lines, by (model, concurrency, column)."""
    starts = [i for i, line in enumerate(table) if line.startswith("| model | concurrency |")]
    if not starts:
        return {}
    header = table[starts[0]]
    columns = [name.strip() for name in header.strip("|").split("|")][2:]
    cells = {}
    for line in table[starts[0] :]:
        if not line.startswith("|"):  # the throughput table ends; the latency one follows
            break
        parts = [part.strip() for part in line.strip().strip("|").split("|")]
        if len(parts) != len(columns) + 2 or parts[0] not in ROW_TITLES.values():
            continue
        for column, text in zip(columns, parts[2:], strict=True):
            figures = _figures(text)
            if figures is not None:
                cells[(parts[0], parts[1], column)] = figures
    return cells


def moved(previous: Sequence[str], current: Sequence[str]) -> list[str]:
    """The cells whose median moved since ``previous`` (an earlier throughput table) by more
    than the spread of either run's rounds, one line each."""
    before, now = throughput_cells(previous), throughput_cells(current)
    lines = []
    for key, (median_, low, high) in now.items():
        if key not in before:
            continue
        old, old_low, old_high = before[key]
        spread = max(high - low, old_high - old_low)
        if abs(median_ - old) > spread:
            model, concurrency, column = key
            lines.append(
                f"{model} c={concurrency} {column}: {_rate(old)} → {_rate(median_)} infer/s "
                f"({(median_ - old) / old:+.0%}; spread of the rounds {_rate(spread)})"
            )
    return lines
