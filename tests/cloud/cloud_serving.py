"""ovmsx serving cloud models in a subprocess: its config, its TMPDIR (where its local copies
go), and inference with tritonclient."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
from cloud_stores import SHAPE
from serving_process import ServerProcess, write_config
from tritonclient.utils import InferenceServerException

X = np.arange(4, dtype=np.float32).reshape(SHAPE)
POLL = ["--file_system_poll_wait_seconds", "1"]


class CloudServer:
    def __init__(self, process: ServerProcess, tmpdir: Path) -> None:
        self.process = process
        self.tmpdir = tmpdir
        self.client = grpcclient.InferenceServerClient(process.url)

    def infer(self, name: str, version: str = "") -> np.ndarray:
        given = grpcclient.InferInput("input", SHAPE, "FP32")
        given.set_data_from_numpy(X)
        return self.client.infer(name, [given], model_version=version).as_numpy("output")

    def answer(self, name: str, version: str = "") -> np.ndarray | str:
        """The output, or the error message of a refused request."""
        try:
            return self.infer(name, version)
        except InferenceServerException as error:
            return error.message()

    def adds(self, name: str, version: str = "") -> float | None:
        """What the version serving the request adds (None: refused)."""
        found = self.answer(name, version)
        return None if isinstance(found, str) else float((found - X).flat[0])

    def copies(self) -> list[Path]:
        """Every file and folder in the server's TMPDIR, relative to it. (os.walk skips a
        folder the server deletes while it is read.)"""
        found = []
        for folder, names, files in os.walk(self.tmpdir):
            found += [Path(folder, name).relative_to(self.tmpdir) for name in names + files]
        return sorted(found)

    def log(self) -> str:
        return self.process.log()


def environment(tmpdir: Path, store_env: Mapping[str, str]) -> dict[str, str]:
    tmpdir.mkdir(exist_ok=True)
    return {**store_env, "TMPDIR": str(tmpdir)}


@contextmanager
def cloud_served(
    workdir: Path,
    args: Sequence[str],
    store_env: Mapping[str, str],
) -> Iterator[CloudServer]:
    """ovmsx with ``args`` while the block runs; it must stop on SIGTERM with 0 and leave its
    TMPDIR empty."""
    tmpdir = workdir / "tmp"
    process = ServerProcess([*args, *POLL], workdir, environment(tmpdir, store_env))
    server = None
    try:
        process.wait_ready()
        server = CloudServer(process, tmpdir)
        yield server
    finally:
        if server is not None:
            server.client.close()
        code = process.stop()
    assert code == 0, f"ovmsx exited with {code} on SIGTERM:\n{process.log()}"
    left = sorted(os.listdir(tmpdir))
    assert left == [], f"left in TMPDIR after the server stopped: {left}\n{process.log()}"


def config_args(workdir: Path, models: Sequence[dict]) -> list[str]:
    return ["--config_path", str(write_config(workdir / "config.json", models))]
