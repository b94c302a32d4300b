"""The ``ovmsx`` command. Flags follow the ``ovms`` binary's; serving arrives with the server."""

from __future__ import annotations

import argparse
import sys

from ovmsx import __version__, _core


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ovmsx", description="OpenVINO Model Server, reimplemented as a Python package."
    )
    parser.add_argument(
        "--version", action="store_true", help="print the ovmsx and OpenVINO versions and exit"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.version:
        print(f"ovmsx {__version__}")
        print(f"OpenVINO backend {_core.openvino_version()}")
        return 0
    print("ovmsx: this release has no server yet; try --version", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
