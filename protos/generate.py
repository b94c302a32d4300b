"""Generate the Python message modules from the .proto files in this folder.

    python protos/generate.py           # rewrite the committed modules
    python protos/generate.py --check   # exit 1 if they differ from a fresh generation (CI)

The output is committed, so installing ovmsx needs no protoc. The compiler is the one inside
grpcio-tools, pinned below to one exact release: generated code differs between protoc
releases, and the pin decides the oldest protobuf runtime the modules accept (the gencode
version check at import time). Only message modules are generated; the server registers its
gRPC handlers by hand, so no *_pb2_grpc.py is needed.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# grpcio-tools 1.76.0 bundles protoc 31.1, whose gencode requires protobuf >= 6.31.1 at runtime.
GRPCIO_TOOLS = "1.76.0"

ROOT = Path(__file__).resolve().parent.parent
# (proto file in protos/, Python package that receives the generated module)
PROTOS = [
    ("grpc_predict_v2.proto", "ovmsx/frontend"),
    ("mediapipe_graph.proto", "ovmsx/graph"),
]

# protoc registers every file in protobuf's process-wide default pool. tritonclient (and
# kserve) register the same full names ("inference.ModelInferRequest", ...) there, so the
# second module imported would fail with "duplicate symbol". A private pool lets ovmsx and a
# KServe client live in one process; the wire format does not depend on the pool.
DEFAULT_POOL_LINE = "DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile("
PRIVATE_POOL_LINES = (
    "# Private pool, not Default(): see protos/generate.py (clash with tritonclient's names).\n"
    "_POOL = _descriptor_pool.DescriptorPool()\n"
    "DESCRIPTOR = _POOL.AddSerializedFile("
)
# A file that imports others (mediapipe_graph.proto imports google/protobuf/any.proto) can only
# be added to a pool that already holds them, and a private pool starts empty. protoc emits one
# "from google.protobuf import any_pb2 as <alias>" line per import; each of those files is
# copied into the private pool first. Only direct imports of well-known types are handled:
# enough for any.proto, which imports nothing. The message classes built from the copy still
# get the well-known-type helpers (Any.Pack/Unpack): protobuf attaches them by full type name.
PB2_IMPORT = re.compile(r"^(?:from ([\w.]+) )?import \w+_pb2 as (\w+)$", re.MULTILINE)


def ensure_grpc_tools() -> None:
    try:
        installed = importlib.metadata.version("grpcio-tools")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed != GRPCIO_TOOLS:
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check"),
                *("--root-user-action=ignore", f"grpcio-tools=={GRPCIO_TOOLS}"),
            ],
            check=True,
        )


def use_private_pool(text: str, name: str) -> str:
    if text.count(DEFAULT_POOL_LINE) != 1:
        raise SystemExit(f"{name}: protoc output changed shape; update use_private_pool()")
    imports = PB2_IMPORT.findall(text)
    if any(package != "google.protobuf" for package, _ in imports):
        raise SystemExit(f"{name}: imports a .proto other than a well-known type; see PB2_IMPORT")
    dependencies = "".join(
        f"_POOL.AddSerializedFile({alias}.DESCRIPTOR.serialized_pb)\n" for _, alias in imports
    )
    private = PRIVATE_POOL_LINES.replace("DESCRIPTOR = ", dependencies + "DESCRIPTOR = ")
    return text.replace(DEFAULT_POOL_LINE, private)


def generate(out_root: Path) -> list[Path]:
    """Write the modules under out_root (mirroring the package layout); return their paths."""
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        for proto, package in PROTOS:
            # Compiling the file from its package path makes protoc record the importable
            # module name ("ovmsx.frontend.x_pb2"), so classes get a correct __module__.
            src = Path(tmp, "src", package, proto)
            src.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / "protos" / proto, src)
            gen = Path(tmp, "gen")
            gen.mkdir(exist_ok=True)
            subprocess.run(
                [
                    *(sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}/src"),
                    *(f"--python_out={gen}", f"--pyi_out={gen}", f"{package}/{proto}"),
                ],
                check=True,
            )
            stem = proto.removesuffix(".proto") + "_pb2"
            for suffix in (".py", ".pyi"):
                text = (gen / package / (stem + suffix)).read_text()
                if suffix == ".py":
                    text = use_private_pool(text, stem)
                dest = out_root / package / (stem + suffix)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(text)
                written.append(dest.relative_to(out_root))
    return written


def check() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        stale = 0
        for rel in generate(Path(tmp)):
            fresh = Path(tmp, rel).read_text().splitlines(keepends=True)
            committed_path = ROOT / rel
            committed = []
            if committed_path.exists():
                committed = committed_path.read_text().splitlines(keepends=True)
            diff = list(difflib.unified_diff(committed, fresh, f"{rel} (committed)", "fresh"))
            if diff:
                stale += 1
                sys.stdout.writelines(diff[:40])
        if stale:
            print("generated protobuf modules are stale: run python protos/generate.py")
        return 1 if stale else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    ensure_grpc_tools()
    if args.check:
        return check()
    for rel in generate(ROOT):
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
