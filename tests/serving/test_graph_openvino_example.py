"""examples/graph_openvino: seed 001's graph, verbatim, over the two models it names."""

from __future__ import annotations

import json

import numpy as np
import tritonclient.grpc as grpcclient
from serving_examples import prepared_copy, run_client
from serving_process import served


def test_example_client_gets_the_graph_answer(tmp_path) -> None:
    folder = prepared_copy("graph_openvino", tmp_path)
    with served(folder / "config.json", tmp_path) as server:
        assert "ok: the graph ran dummy, then add" in run_client(folder, server.url)


def test_models_from_the_graph_subconfig_serve_the_same_graph(tmp_path) -> None:
    folder = prepared_copy("graph_openvino", tmp_path)
    graph_dir = folder / "dummy_add"
    models = {
        "model_config_list": [
            {"config": {"name": name, "base_path": str(folder / "models" / name)}}
            for name in ("dummy", "add")
        ]
    }
    (graph_dir / "subconfig.json").write_text(json.dumps(models))
    config = folder / "only_graph.json"
    config.write_text(
        json.dumps({"model_config_list": [], "mediapipe_config_list": [{"name": "dummy_add"}]})
    )
    with served(config, tmp_path) as server:
        in1 = np.random.default_rng(1).uniform(-5, 5, (1, 10)).astype(np.float32)
        in2 = np.random.default_rng(2).uniform(-5, 5, (1, 10)).astype(np.float32)
        with grpcclient.InferenceServerClient(server.url) as client:
            inputs = []
            for name, values in (("in1", in1), ("in2", in2)):
                tensor = grpcclient.InferInput(name, [1, 10], "FP32")
                tensor.set_data_from_numpy(values)
                inputs.append(tensor)
            result = client.infer("dummy_add", inputs, request_id="my_id")
        np.testing.assert_allclose(result.as_numpy("out"), in1 + 1 + in2, rtol=1e-6)
        response = result.get_response()
        assert (response.model_name, response.model_version, response.id) == (
            "dummy_add",
            "1",
            "my_id",
        )
