"""examples/pipelines: prepare it, serve its config, run its client."""

from __future__ import annotations

import json

import numpy as np
import tritonclient.grpc as grpcclient
from serving_examples import prepared_copy, run_client
from serving_pipelines import fp32_input
from serving_process import served

import ovmsx.custom_nodes
from ovmsx import _core


def test_pipeline_example_client_gets_the_right_answers(tmp_path) -> None:
    folder = prepared_copy("pipelines", tmp_path)
    with served(folder / "config.json", tmp_path) as server:
        assert "ok: both pipelines answered as expected" in run_client(folder, server.url)
        _same_as_the_steps_by_hand(server.url, json.loads((folder / "config.json").read_text()))


def _same_as_the_steps_by_hand(url: str, config: dict) -> None:
    """image_to_numbers on a random image equals: the image_transformation node called
    directly, the flatten model over gRPC, then add_one's +1."""
    image = np.random.default_rng(5).uniform(0, 255, (1, 7, 9, 3)).astype(np.float32)
    pipeline = config["pipeline_config_list"][0]
    params = pipeline["nodes"][0]["params"]
    library = _core.CustomNodeLibrary.load(str(ovmsx.custom_nodes.built_in("image_transformation")))
    node = library.initialize(params)
    (small,) = node.execute([_core.Tensor("image", image)])
    small = np.array(small)
    node.close()
    with grpcclient.InferenceServerClient(url) as client:
        row = client.infer("flatten", [fp32_input("image", small)]).as_numpy("row")
        answer = client.infer("image_to_numbers", [fp32_input("image", image)]).as_numpy("numbers")
    np.testing.assert_allclose(answer, row + 1, rtol=1e-5, atol=1e-4)
