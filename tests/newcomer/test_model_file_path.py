"""``--model_path`` (and a config's ``base_path``) may name a single model file, served as
version 1, as OVMS does; ``--help`` says so."""

from __future__ import annotations

from pathlib import Path

import grpc
import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_process import ServerProcess, run_to_exit, served, write_config
from tritonclient.utils import InferenceServerException

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _add_one(client: grpcclient.InferenceServerClient, model: str, version: str = "") -> np.ndarray:
    data = np.arange(10, dtype=np.float32).reshape(1, 10)
    tensor = grpcclient.InferInput("input", [1, 10], "FP32")
    tensor.set_data_from_numpy(data)
    result = client.infer(model, [tensor], model_version=version)
    return result.as_numpy("output") - data


def _model_file(root: Path) -> Path:
    return sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "repo") / "1" / "model.xml"


def test_help_says_a_model_file_is_served_as_version_1(tmp_path: Path) -> None:
    code, output = run_to_exit(["--help"], tmp_path)
    assert code == 0
    assert "or a model file, served as version 1" in " ".join(output.split())


def test_model_path_naming_a_file_serves_it_as_version_1(tmp_path: Path) -> None:
    model_file = _model_file(tmp_path)
    server = ServerProcess(
        [
            "--model_name",
            "single",
            "--model_path",
            str(model_file),
            "--plugin_config",
            '{"INFERENCE_PRECISION_HINT": "f32"}',
        ],
        tmp_path,
    )
    try:
        server.wait_ready()
        with grpcclient.InferenceServerClient(server.url) as client:
            assert client.is_model_ready("single", "1")
            assert list(client.get_model_metadata("single").versions) == ["1"]
            assert np.array_equal(_add_one(client, "single", "1"), np.ones((1, 10)))
    finally:
        code = server.stop()
    assert code == 0, server.log()


def test_base_path_naming_a_file_or_a_file_of_another_kind(tmp_path: Path) -> None:
    model_file = _model_file(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a model")
    config = write_config(
        tmp_path / "config.json",
        [
            {"name": "by_file", "base_path": str(model_file), "plugin_config": F32},
            {"name": "by_text", "base_path": str(notes)},
        ],
    )
    with served(config, tmp_path) as server, grpcclient.InferenceServerClient(server.url) as client:
        assert np.array_equal(_add_one(client, "by_file"), np.ones((1, 10)))
        with pytest.raises(InferenceServerException) as refused:
            client.is_model_ready("by_text")
        assert refused.value.status() == str(grpc.StatusCode.NOT_FOUND)
        log = server.log()
    assert f"{notes}: a model file is one of .xml, .onnx" in log
