"""A graph folder with ``graph.pbtxt`` and a ``config.json`` but no ``subconfig.json``: the
graph's models come from that ``config.json``, as OVMS reads it in place of the subconfig
(modelmanager.cpp); a ``config.json`` of another kind beside a graph is left alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_process import ServerProcess
from tritonclient.utils import InferenceServerException

# The graph infers through the model ``add_five``, which only its folder's config.json names.
GRAPH = """
input_stream: "in"
output_stream: "out"
node {
  calculator: "OpenVINOModelServerSessionCalculator"
  output_side_packet: "SESSION:add"
  node_options: {
    [type.googleapis.com / mediapipe.OpenVINOModelServerSessionCalculatorOptions]: {
      servable_name: "add_five"
      servable_version: "1"
    }
  }
}
node {
  calculator: "OpenVINOInferenceCalculator"
  input_side_packet: "SESSION:add"
  input_stream: "IN:in"
  output_stream: "OUT:out"
  node_options: {
    [type.googleapis.com / mediapipe.OpenVINOInferenceCalculatorOptions]: {
      tag_to_input_tensor_names { key: "IN" value: "input" }
      tag_to_output_tensor_names { key: "OUT" value: "output" }
    }
  }
}
"""


def _graph_folder(folder: Path, folder_config: dict) -> Path:
    sm.save(sm.add_constant([1, 4], 5, "add_five"), folder / "models" / "add_five")
    (folder / "graph.pbtxt").write_text(GRAPH)
    (folder / "config.json").write_text(json.dumps(folder_config))
    return folder


MODELS = {"model_config_list": [{"config": {"name": "add_five", "base_path": "models/add_five"}}]}


def _infer(server: ServerProcess, name: str, tensor: str) -> np.ndarray:
    given = grpcclient.InferInput(tensor, [1, 4], "FP32")
    given.set_data_from_numpy(np.arange(4, dtype=np.float32).reshape(1, 4))
    with grpcclient.InferenceServerClient(server.url) as client:
        return client.infer(name, [given]).as_numpy("out" if name == "g" else "output")


def _serving(args: list[str], workdir: Path):
    server = ServerProcess(args, workdir)
    server.wait_ready()
    return server


@pytest.mark.parametrize("mode", ["config file", "model_path"])
def test_the_graph_folder_config_json_brings_the_graphs_models(tmp_path: Path, mode: str) -> None:
    folder = _graph_folder(tmp_path / "g", MODELS)
    if mode == "config file":
        config = tmp_path / "config.json"
        config.write_text(
            json.dumps({"model_config_list": [], "mediapipe_config_list": [{"name": "g"}]})
        )
        args = ["--config_path", str(config)]
    else:
        args = ["--model_name", "g", "--model_path", str(folder)]
    server = _serving(args, tmp_path)
    try:
        expected = np.arange(4, dtype=np.float32).reshape(1, 4) + 5
        np.testing.assert_array_equal(_infer(server, "g", "in"), expected)
        np.testing.assert_array_equal(_infer(server, "add_five", "input"), expected)
    finally:
        assert server.stop() == 0, server.log()


def test_a_config_json_of_another_kind_is_no_subconfig(tmp_path: Path) -> None:
    """A folder's config.json that is not shaped as a subconfig (Hugging Face's, or one with
    more keys) brings no models and no error: the graph is reported for the model it lacks."""
    _graph_folder(tmp_path / "g", {**MODELS, "architectures": ["LlamaForCausalLM"]})
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"model_config_list": [], "mediapipe_config_list": [{"name": "g"}]})
    )
    server = _serving(["--config_path", str(config)], tmp_path)
    try:
        with pytest.raises(InferenceServerException, match="not found"):
            _infer(server, "add_five", "input")
    finally:
        assert server.stop() == 0, server.log()
    assert "g/config.json" not in server.log()
