"""Every fuzz target by name: how to set it up (in a scratch folder) and its seed inputs.

A target is one function taking ``bytes``, wrapped by ``fuzz_contract.guarded``: it returns,
or raises one of ovmsx's errors with a message; anything else is a finding. ``bench/fuzz.py``
runs them; ``test_fuzz_targets.py`` runs each for a bounded count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fuzz_contract import guarded


@dataclass(frozen=True)
class Target:
    setup: Callable[[Path], Callable[[bytes], None]]
    """The raw target, given a scratch folder (models, a compiled node) it may fill."""
    seeds: Callable[[], list[bytes]]
    summary: str


def _model_infer(workdir: Path) -> Callable[[bytes], None]:
    from serving_setup import start_serving
    from targets_serving import model_infer

    return model_infer(start_serving(workdir))


def _rest_infer(workdir: Path) -> Callable[[bytes], None]:
    from serving_setup import start_serving
    from targets_serving import rest_infer

    return rest_infer(start_serving(workdir))


def _plain(name: str) -> Callable[[Path], Callable[[bytes], None]]:
    def setup(workdir: Path) -> Callable[[bytes], None]:
        import targets_parsers

        return getattr(targets_parsers, name)

    return setup


def _custom_node(workdir: Path) -> Callable[[bytes], None]:
    from targets_custom_node import custom_node_outputs

    return custom_node_outputs(workdir)


def _seeds(module: str, name: str) -> Callable[[], list[bytes]]:
    def seeds() -> list[bytes]:
        return getattr(__import__(module), name)()

    return seeds


TARGETS: dict[str, Target] = {
    "model_infer": Target(
        _model_infer,
        _seeds("targets_serving", "model_infer_seeds"),
        "a gRPC ModelInfer body, answered in process (C++ direct path and general path)",
    ),
    "rest_infer": Target(
        _rest_infer,
        _seeds("targets_serving", "rest_infer_seeds"),
        "a REST infer body (JSON and binary), with Inference-Header-Content-Length",
    ),
    "bytes": Target(
        _plain("bytes_unpacking"),
        _seeds("targets_parsers", "bytes_seeds"),
        "KServe BYTES unpacking, padded strings, bytes_contents in a request",
    ),
    "images": Target(
        _plain("image_decoding"),
        _seeds("targets_parsers", "image_seeds"),
        "encoded images decoded and fitted to an image input",
    ),
    "graph": Target(
        _plain("graph_parsing"),
        _seeds("targets_parsers", "graph_seeds"),
        "graph.pbtxt parsing and validation",
    ),
    "config": Target(
        _plain("config_parsing"),
        _seeds("targets_parsers", "config_seeds"),
        "config.json parsing and validation",
    ),
    "custom_node": Target(
        _custom_node,
        _seeds("targets_custom_node", "custom_node_seeds"),
        "custom-node outputs validated as a pipeline calls the node",
    ),
}


def fuzz_function(name: str, workdir: Path) -> Callable[[bytes], None]:
    """Target ``name``, set up in ``workdir``, under the fuzzing contract."""
    return guarded(TARGETS[name].setup(workdir))
