"""What paths a config may use (docs/security.md, "Paths in the config"): absolute paths and
symbolic links are the operator's to choose and are followed; ``..`` is refused
(tests/pipeline_details/test_escaping_paths.py). Here: a model and a graph reached through
links, and a handler script named by an absolute path, all serve."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import tritonclient.grpc as grpcclient
from quota_clients import uint8_input
from rest_process import RestProcess
from security_servables import GATE, copy_bytes
from serving_graphs import graph_text, python_node
from serving_models import save


def test_links_and_absolute_paths_in_the_config_are_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    save(copy_bytes(), real / "copy")
    script = real / "scripts" / "gate.py"
    script.parent.mkdir()
    script.write_text(textwrap.dedent(GATE))
    graph = real / "graph"
    graph.mkdir()
    (graph / "graph.pbtxt").write_text(
        graph_text(
            ["OVMS_PY_TENSOR:input"],
            ["OVMS_PY_TENSOR:output"],
            [python_node("gate", str(script), ["INPUT:input"], ["OUTPUT:output"])],
        )
    )
    (real / "scripts" / "open").touch()  # the node's base_path is its script's folder
    served = tmp_path / "served"
    served.mkdir()
    (served / "copy").symlink_to(real / "copy")
    (served / "graph").symlink_to(graph)
    config = served / "config.json"
    config.write_text(
        json.dumps(
            {
                "model_config_list": [{"config": {"name": "copy", "base_path": "copy"}}],
                "mediapipe_config_list": [{"name": "gate", "base_path": "graph"}],
            }
        )
    )
    process = RestProcess(["--config_path", str(config)], tmp_path)
    try:
        process.wait_ready()
        with grpcclient.InferenceServerClient(f"127.0.0.1:{process.port}") as client:
            copied = client.infer("copy", [uint8_input(5)]).as_numpy("output")
            assert copied.tolist() == [7] * 5
            assert client.infer("gate", [uint8_input(5)]).as_numpy("output").tolist() == [5]
    finally:
        code = process.stop()
    assert code == 0, process.log()
