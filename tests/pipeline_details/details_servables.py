"""What the pipeline-detail tests serve: small OpenVINO models, the test demultiplexer node
compiled here, and a one-node Python graph, written under one folder."""

from __future__ import annotations

import os
import shlex
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_graphs import HANDLERS, graph_text, python_node

import ovmsx.custom_nodes

# The test node that makes K copies of a [1,N] input, K = its first number: [K,1,N].
DEMULTIPLY_SOURCE = Path(__file__).resolve().parents[1] / "serving" / "nodes" / "demultiply.c"
# Extra compiler flags for the test nodes built here: .ci/sanitize sets them so that the nodes
# run under AddressSanitizer and UndefinedBehaviorSanitizer like the rest of the native code.
SANITIZE_FLAGS = shlex.split(os.environ.get("OVMSX_TEST_NODE_CFLAGS", ""))

# A graph of one Python node: OVMS_PY_TENSOR "input" -> "output" = input + 1.
INCREMENT_GRAPH = graph_text(
    ["OVMS_PY_TENSOR:input"],
    ["OVMS_PY_TENSOR:output"],
    [python_node("increment", "increment.py", ["INPUT:input"], ["OUTPUT:output"])],
)


def compile_demultiplier(folder: Path) -> Path:
    """``libdemultiply.so``, built with the system compiler against the installed ABI header."""
    target = folder / "libdemultiply.so"
    include = ovmsx.custom_nodes.include_dir()
    command = ["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-I{include}", *SANITIZE_FLAGS]
    subprocess.run([*command, str(DEMULTIPLY_SOURCE), "-o", str(target)], check=True)
    return target


def save_add_one(folder: Path) -> Path:
    """FP32 [1,10] ``input`` -> ``output`` = input + 1, as version 1 under ``folder``."""
    return sm.save(sm.add_constant([1, 10], 1, "add_one"), folder)


def write_graph(folder: Path, text: str, handlers: tuple[str, ...] = ("increment.py",)) -> Path:
    """A graph folder: ``graph.pbtxt`` and the named handler scripts of the serving tests."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.pbtxt").write_text(text)
    for name in handlers:
        (folder / name).write_text(textwrap.dedent(HANDLERS[name]))
    return folder


def fp32(name: str, data: np.ndarray) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, list(data.shape), "FP32")
    given.set_data_from_numpy(data)
    return given
