"""Every way of sending inputs of varying shape that OVMS's "Dynamic Input Parameters" page
lists, on one real server: a model with dynamic dimensions, an encoded image resized to a
static model, ``batch_size`` and ``shape`` ``"auto"`` (served with dynamic dimensions, and the
log says so), a pipeline demultiplexing any batch, and a Python node taking any shape. (The
custom-node resize and the other graph input kinds have their own tests; docs/dynamic_inputs.md
lists them.)"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator

import cv2
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_graphs import graph_text, python_node
from serving_pipelines import fp32_input, model_node, pipeline
from serving_process import ServerProcess, served

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
DOUBLER = """
import numpy as np
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs):
        return [Tensor("doubled", np.array(inputs[0]) * 2)]
"""


def _u8_image_model() -> ov.Model:
    """UINT8 NHWC [1,4,6,3] -> FP32, the pixels as they came: shows what the server fed it."""
    x = ops.parameter([1, 4, 6, 3], ov.Type.u8, name="image")
    y = ops.convert(x, ov.Type.f32)
    y.output(0).set_names({"pixels"})
    return ov.Model([y], [x], "pixels")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("dynamic_inputs")
    sm.save(sm.add_constant([-1, -1], 1, "dynamic"), root / "dynamic")
    sm.save(sm.add_constant([1, 10], 1, "fixed"), root / "fixed")
    sm.save(_u8_image_model(), root / "pixels")
    models = [
        {"name": "dynamic", "base_path": str(root / "dynamic")},
        {"name": "batch_auto", "base_path": str(root / "fixed"), "batch_size": "auto"},
        {"name": "shape_auto", "base_path": str(root / "fixed"), "shape": "auto"},
        {"name": "row", "base_path": str(root / "fixed")},
        {"name": "pixels", "base_path": str(root / "pixels"), "layout": "NHWC"},
    ]
    rows = pipeline(
        "rows",
        ["rows"],
        [model_node("one", "row", {"input": ("request", "rows")}, {"output": "row"})],
        {"rows_plus_one": ("one", "row")},
        demultiply_count=-1,
    )
    graph = root / "doubler"
    graph.mkdir()
    (graph / "doubler.py").write_text(textwrap.dedent(DOUBLER))
    node = python_node("double", "doubler.py", ["INPUT:in"], ["OUTPUT:doubled"])
    (graph / "graph.pbtxt").write_text(
        graph_text(["OVMS_PY_TENSOR:in"], ["OVMS_PY_TENSOR:doubled"], [node])
    )
    config = {
        "model_config_list": [{"config": {**m, "plugin_config": F32}} for m in models],
        "pipeline_config_list": [rows],
        "mediapipe_config_list": [{"name": "doubler", "base_path": str(graph)}],
    }
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    with served(path, root) as process:
        yield process


def _plus_one(client: grpcclient.InferenceServerClient, model: str, shape: tuple) -> None:
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = client.infer(model, [fp32_input("input", x)]).as_numpy("output")
    np.testing.assert_array_equal(got, x + 1)


@pytest.mark.parametrize("shape", [(1, 3), (4, 7), (2, 10)])
def test_a_model_with_dynamic_dimensions_takes_any_shape(client, shape) -> None:
    _plus_one(client, "dynamic", shape)


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_batch_size_auto_takes_any_batch_without_a_reload(client, server, batch) -> None:
    _plus_one(client, "batch_auto", (batch, 10))
    assert server.log().count("Loaded model batch_auto") == 1  # never reloaded


@pytest.mark.parametrize("shape", [(1, 10), (2, 5), (3, 1)])
def test_shape_auto_takes_any_shape_without_a_reload(client, server, shape) -> None:
    _plus_one(client, "shape_auto", shape)
    assert server.log().count("Loaded model shape_auto") == 1


def test_auto_is_said_to_be_served_with_dynamic_dimensions(server) -> None:
    log = server.log()
    assert (
        'batch_size "auto" of model batch_auto input input is served with dynamic dimensions: '
        "requests of any batch size are taken without reloading the model"
    ) in log
    assert 'shape "auto" of model shape_auto input input is served with dynamic dimensions' in log


def test_an_encoded_image_is_resized_to_the_models_shape(client) -> None:
    picture = np.random.default_rng(3).integers(0, 256, (9, 5, 3), dtype=np.uint8)
    ok, png = cv2.imencode(".png", picture)
    assert ok
    given = grpcclient.InferInput("image", [1], "BYTES")
    given.set_data_from_numpy(np.array([png.tobytes()], dtype=np.object_))
    got = client.infer("pixels", [given]).as_numpy("pixels")
    expected = cv2.resize(picture, (6, 4))[np.newaxis].astype(np.float32)  # PNG is lossless
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("batch", [1, 4])
def test_a_demultiplexer_takes_any_batch(client, batch) -> None:
    rows = np.arange(batch * 10, dtype=np.float32).reshape(batch, 1, 10)
    got = client.infer("rows", [fp32_input("rows", rows)]).as_numpy("rows_plus_one")
    np.testing.assert_array_equal(got, rows + 1)


@pytest.mark.parametrize("shape", [(2,), (3, 4), (1, 2, 5)])
def test_a_python_node_takes_any_shape(client, shape) -> None:
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = client.infer("doubler", [fp32_input("in", x)]).as_numpy("doubled")
    np.testing.assert_array_equal(got, x * 2)
