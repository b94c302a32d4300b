"""Who serves what: the models each server loads, and the contenders of each table row.

A row of the report is one benchmark model (``add_one``, ``identity``, ``ocr_det``,
``py_add_one``); its contenders are (server, served model) pairs in the report's columns. Rows
that share a contender are measured together: ``py_add_one`` sets ovmsx's Python-node graph
against Triton's numpy ``add_one``, which is measured once, with the ``add_one`` row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import bench_graphs
import bench_models
from infer_request_gen import InputSpec

from . import models
from .models import PeerModel

ROWS = ("add_one", "identity", "ocr_det", "py_add_one")
GROUP = {"py_add_one": "add_one"}  # rows measured with another row's contenders
COLUMNS = ("ovmsx", "Triton", "Triton + OpenVINO", "KServe", "MLServer")
PEER_COLUMN = {"kserve": "KServe", "mlserver": "MLServer"}


@dataclass(frozen=True)
class Contender:
    column: str  # the report's column
    server: str  # "ovmsx" or a peer's name
    model: str  # the served model's name
    input: InputSpec
    output: str
    expects: str  # what the answer must be: "add_one", "identity" or "ocr_det"


def peer_models(peer: str, bench: dict[str, bench_models.BenchModel]) -> list[PeerModel]:
    """The models ``peer`` serves: add_one and identity in numpy, the CNN with OpenVINO; Triton
    also serves add_one with OpenVINO ("Triton + OpenVINO")."""
    served = [models.numpy_model(bench["add_one"])]
    if peer == "triton":
        served.append(models.openvino_model(bench["add_one"], "add_one_openvino"))
    if "identity" in bench:
        served.append(models.numpy_model(bench["identity"]))
    if "ocr_det" in bench:
        served.append(models.openvino_model(bench["ocr_det"]))
    return served


def contender_for(
    column: str, server: str, model: bench_models.BenchModel, name: str = ""
) -> Contender:
    (spec,) = model.inputs
    return Contender(column, server, name or model.name, spec, model.output, model.name)


def row_contenders(
    row: str, peers: Sequence[str], bench: dict[str, bench_models.BenchModel]
) -> list[Contender]:
    if row == "py_add_one":
        specs, output = bench_graphs.interface(row, bench["add_one"])
        graph = Contender("ovmsx", "ovmsx", row, specs[0], output, "add_one")
        peer = [contender_for("Triton", "triton", bench["add_one"])] if "triton" in peers else []
        return [graph, *peer]
    model = bench[row]
    found = [contender_for("ovmsx", "ovmsx", model)]
    if "triton" in peers:
        if row in ("add_one", "identity"):
            found.append(contender_for("Triton", "triton", model))
        if row in ("add_one", "ocr_det"):
            openvino = "add_one_openvino" if row == "add_one" else row
            found.append(contender_for("Triton + OpenVINO", "triton", model, openvino))
    found += [contender_for(PEER_COLUMN[p], p, model) for p in peers if p in PEER_COLUMN]
    return found


def groups(
    rows: Sequence[str], peers: Sequence[str], bench: dict[str, bench_models.BenchModel]
) -> dict[str, list[Contender]]:
    """Measurement groups, in row order: each group's contenders alternate with one another."""
    plan: dict[str, list[Contender]] = {}
    for row in rows:
        members = plan.setdefault(GROUP.get(row, row), [])
        for contender in row_contenders(row, peers, bench):
            if (contender.server, contender.model) not in {(m.server, m.model) for m in members}:
                members.append(contender)
    return plan
