"""The models a peer serves, described once for every peer.

A ``PeerModel`` names the served model, its one input and one output (the same names ovmsx's
models use, so one request fits every server) and what it computes (``peer_compute.make``).
Each peer writes ``spec_json(model)`` where its own code can read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import bench_models
from infer_request_gen import InputSpec


@dataclass(frozen=True)
class PeerModel:
    name: str  # as served
    kind: str  # "add_one" | "identity" (numpy) | "openvino" (model_file compiled with OpenVINO)
    input: InputSpec
    output: str
    model_file: Path | None = None
    reshape: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def uses_openvino(self) -> bool:
        return self.kind == "openvino"


def numpy_model(model: bench_models.BenchModel, name: str | None = None) -> PeerModel:
    """``model``'s computation written in numpy (add_one or identity)."""
    (spec,) = model.inputs
    return PeerModel(name or model.name, model.name, spec, model.output)


def openvino_model(model: bench_models.BenchModel, name: str | None = None) -> PeerModel:
    """``model``'s own file, compiled with OpenVINO by the peer as ovmsx compiles it."""
    (spec,) = model.inputs
    return PeerModel(
        name or model.name, "openvino", spec, model.output, model.model_file, model.reshape
    )


def compute_spec(model: PeerModel) -> dict:
    """Keyword arguments of ``peer_compute.make`` for ``model``."""
    spec: dict = {"kind": model.kind}
    if model.uses_openvino:
        spec["model_file"] = str(Path(model.model_file).resolve())
        spec["reshape"] = {name: list(dims) for name, dims in model.reshape.items()}
        # The same properties as ovmsx's config (bench_models.PLUGIN_CONFIG).
        spec["properties"] = dict(bench_models.PLUGIN_CONFIG)
    return spec


def spec_json(model: PeerModel) -> dict:
    """Everything a peer's code needs about one model, as JSON-ready data."""
    return {
        "name": model.name,
        "input": model.input.name,
        "output": model.output,
        "shape": list(model.input.shape),
        "datatype": model.input.datatype,
        "compute": compute_spec(model),
    }


def write_specs(models: list[PeerModel], path: Path) -> Path:
    path.write_text(json.dumps([spec_json(m) for m in models], indent=2) + "\n")
    return path
