"""Create one virtual environment per peer server, outside the repository.

    python bench/peers/setup_peers.py                  # all peers, into ~/.cache/ovmsx-peers
    python bench/peers/setup_peers.py triton --cache-dir /tmp/peers

Each peer gets the exact versions below (those checked to run here), plus the OpenVINO release
ovmsx is built against wherever that peer runs a model with OpenVINO ("Triton + OpenVINO", and
the CNN on KServe and MLServer), so that every server compiles the CNN with the same runtime.
A finished environment records its requirements in ``ovmsx-peer.txt``; rerunning skips it when
they match.

The benchmark only ever reads these environments; nothing here is imported by ovmsx or its tests.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import sys
from pathlib import Path

DEFAULT_CACHE = Path.home() / ".cache" / "ovmsx-peers"
OPENVINO = "openvino==2026.4.1"
# What each peer's environment holds. The Triton server binary and its Python backend ship inside
# the nvidia-pytriton wheel (Triton 2.51); its model.py files import numpy and openvino from here.
REQUIREMENTS = {
    "triton": ["nvidia-pytriton==0.7.0", "numpy", OPENVINO],
    "kserve": ["kserve==0.21.0", "numpy", OPENVINO],
    "mlserver": ["mlserver==1.7.1", "numpy", OPENVINO],
}
STAMP = "ovmsx-peer.txt"


def venv_dir(peer: str, cache: Path = DEFAULT_CACHE) -> Path:
    return cache / peer


def python_of(peer: str, cache: Path = DEFAULT_CACHE) -> Path:
    return venv_dir(peer, cache) / "bin" / "python"


def site_packages(peer: str, cache: Path = DEFAULT_CACHE) -> Path:
    (folder,) = venv_dir(peer, cache).glob("lib/python3.*/site-packages")
    return folder


def installed_version(peer: str, package: str, cache: Path = DEFAULT_CACHE) -> str:
    """The version of ``package`` in ``peer``'s environment, read from its metadata."""
    found = importlib.metadata.distributions(name=package, path=[str(site_packages(peer, cache))])
    return next(iter(found)).version


def is_ready(peer: str, cache: Path = DEFAULT_CACHE) -> bool:
    stamp = venv_dir(peer, cache) / STAMP
    return stamp.exists() and stamp.read_text().split() == REQUIREMENTS[peer]


def create(peer: str, cache: Path) -> None:
    folder = venv_dir(peer, cache)
    if is_ready(peer, cache):
        print(f"{peer}: ready in {folder}")
        return
    print(f"{peer}: installing {' '.join(REQUIREMENTS[peer])} into {folder}", flush=True)
    # The base interpreter, not this venv's: Triton's Python stub loads the libpython of the
    # interpreter the venv was made from, which must be a shared-libpython build.
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", str(folder)], check=True)
    pip = [str(folder / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", *REQUIREMENTS[peer]], check=True)
    (folder / STAMP).write_text("\n".join(REQUIREMENTS[peer]) + "\n")
    print(f"{peer}: done", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("peers", nargs="*", help=f"any of {', '.join(REQUIREMENTS)} (default: all)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    unknown = set(args.peers) - set(REQUIREMENTS)
    if unknown:
        parser.error(
            f"unknown peer(s) {', '.join(sorted(unknown))}; choose from {', '.join(REQUIREMENTS)}"
        )
    for peer in args.peers or REQUIREMENTS:
        create(peer, args.cache_dir)


if __name__ == "__main__":
    main()
