"""docs/performance.md: each benchmark owns one marked section and rewrites only that, and only
when asked with ``--write``: a run to look at the figures leaves the tracked docs as they are.

    add_write_arguments(parser)              # --write, --doc
    publish(text, SECTION, args)             # print; write the section only with --write
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
from collections.abc import Iterable
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
DOC_HEADER = """# Performance

Benchmarks live in `bench/`. Each script measures one part of ovmsx against what OVMS users run
today and writes its own section of this file between `<!-- name:begin -->` and
`<!-- name:end -->` markers, leaving everything else untouched. To refresh a section, rerun its
script with `--write` from the repository root on an otherwise idle machine, e.g.
`python bench/bench_bytes_codec.py --write`; without `--write` a script only prints its figures.
The gRPC benchmarks measure with Triton's perf_analyzer: [bench/README.md](../bench/README.md)
says how to get one.
"""


def add_write_arguments(parser: argparse.ArgumentParser, doc: Path = DOC) -> None:
    """``--write`` (off by default: figures are printed, the doc is left alone) and ``--doc``."""
    parser.add_argument(
        "--write", action="store_true", help=f"also write the figures into {shown(doc)}"
    )
    parser.add_argument("--doc", type=Path, default=doc, help="the markdown file --write updates")


def labelled(name: str, label: str) -> str:
    """Section ``name``, or ``name-label`` for a variant of the same benchmark."""
    return f"{name}-{label}" if label else name


def publish(text: str, name: str, args: argparse.Namespace) -> None:
    """Print section ``name``; write it into ``args.doc`` only when ``args.write`` is set."""
    print(text)
    if args.write:
        write_section(text, name, args.doc)
        print(f"wrote {args.doc}")
    else:
        print(f"\n(printed only; rerun with --write to update {shown(args.doc)})")


def shown(path: Path) -> str:
    """``path`` as the README's commands write it: relative to the repository root."""
    try:
        return str(path.relative_to(DOC.parent.parent))
    except ValueError:
        return str(path)


def markers(name: str) -> tuple[str, str]:
    """The begin and end markers of the section owned by benchmark ``name``."""
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def write_section(text: str, name: str, path: Path = DOC) -> None:
    """Replace section ``name`` of ``path`` with ``text``, creating file or section if needed.

    ``text`` is the section body without markers; they are added here.
    """
    begin, end = markers(name)
    block = f"{begin}\n{text.strip(chr(10))}\n{end}"
    doc = path.read_text() if path.exists() else DOC_HEADER
    start, stop = doc.find(begin), doc.find(end)
    if start != -1 and stop > start:
        doc = doc[:start] + block + doc[stop + len(end) :]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc)


def machine(packages: Iterable[str]) -> str:
    """One line naming the CPU, OS, Python and the given packages' versions."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = ", ".join(f"{name} {_version(name)}" for name in packages)
    return (
        f"{cpu}, {os.cpu_count()} logical CPUs, {platform.platform()}; "
        f"Python {platform.python_version()}, {versions}"
    )


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"
