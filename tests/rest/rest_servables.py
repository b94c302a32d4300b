"""What the REST tests serve: models built with OpenVINO, a pipeline and two graphs.

- ``add_one``: FP32 ``input`` [1,10] -> ``output`` = input + 1;
- ``two_inputs``: FP32 ``a``, ``b`` [1,4] -> ``sum``, ``diff``;
- ``typed``: one [-1] input per integer datatype, FP64 and BOOL (serving_models.typed_model);
- ``strings``: STRING ``text`` [-1] -> ``twice``, ``count``;
- ``half``: FP16 ``input`` [-1] -> ``output``, a copy;
- ``identity``: FP32 ``input`` [-1,-1] -> ``output``, a copy (for large requests);
- ``versioned``: versions 1 and 2 of add_one adding 1 and 2, both served;
- ``labelled``: add_one saved with a ``model_info`` section in its runtime info (``LABELS``);
- ``emptied``: FP32 ``input`` [1,10] -> ``rows`` [0,10] and ``cols`` [1,0], outputs with no
  elements;
- ``add_two``: a pipeline running add_one twice;
- ``echo``: a graph whose Python node returns its input (any datatype, shape kept);
- ``passthrough``: a graph taking the whole request (REQUEST) and answering with a whole
  response (RESPONSE): every input back as an output of the same name.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import serving_models as sm
import serving_pipelines as sp

# This CPU would otherwise infer in bf16; the tests compare numbers exactly.
F32 = {"INFERENCE_PRECISION_HINT": "f32"}

ECHO_GRAPH = """
input_stream: "OVMS_PY_TENSOR:in"
output_stream: "OVMS_PY_TENSOR:out"
node {
  name: "echo"
  calculator: "PythonExecutorCalculator"
  input_side_packet: "PYTHON_NODE_RESOURCES:py"
  input_stream: "INPUT:in"
  output_stream: "OUTPUT:out"
  node_options: {
    [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: { handler_path: "echo.py" }
  }
}
"""

ECHO_HANDLER = """
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs):
        given = inputs[0]
        return [Tensor("out", given, shape=given.shape, datatype=given.datatype)]
"""

PASSTHROUGH_GRAPH = """
input_stream: "REQUEST:req"
output_stream: "RESPONSE:res"
node {
  name: "request_echo"
  calculator: "RequestEcho"
  input_stream: "REQUEST:req"
  output_stream: "RESPONSE:res"
}
"""

CALCULATORS = '''
from ovmsx.calculators import PythonCalculator, register_calculator
from ovmsx.frontend.grpc_predict_v2_pb2 import ModelInferRequest, ModelInferResponse


@register_calculator
class RequestEcho(PythonCalculator):
    """Every input of the request back as an output of the same name; the request's id and
    its parameter "note" as response parameters."""

    INPUTS = ("REQUEST",)
    OUTPUTS = ("RESPONSE",)

    def process(self, context):
        request = context.input("REQUEST")
        assert isinstance(request, ModelInferRequest), type(request)
        response = ModelInferResponse()
        for index, given in enumerate(request.inputs):
            response.outputs.add(name=given.name, datatype=given.datatype, shape=given.shape)
            response.raw_output_contents.append(request.raw_input_contents[index])
        response.parameters["seen_id"].string_param = request.id
        if "note" in request.parameters:
            response.parameters["note"].string_param = request.parameters["note"].string_param
        context.output("RESPONSE", response)
'''


def half_model() -> ov.Model:
    x = ops.parameter([-1], ov.Type.f16, name="input")
    y = ops.multiply(x, ops.constant(np.float16(1)))
    y.output(0).get_tensor().set_names({"output"})
    return ov.Model([y], [x], "half")


# The model_info section "labelled" is saved with, as REST metadata shows it: values as text.
LABELS = {
    "labels": "cat dog",
    "confidence_threshold": "0.5",
    "resolution": {"height": "200", "width": "300"},
}


def labelled_model() -> ov.Model:
    model = sm.add_constant([1, 10], 1, "labelled")
    model.set_rt_info("cat dog", ["model_info", "labels"])
    model.set_rt_info(0.5, ["model_info", "confidence_threshold"])  # saved as text
    model.set_rt_info("200", ["model_info", "resolution", "height"])
    model.set_rt_info("300", ["model_info", "resolution", "width"])
    model.set_rt_info("not shown", ["other_section", "key"])  # only model_info is
    return model


def emptied_model() -> ov.Model:
    x = ops.parameter([1, 10], ov.Type.f32, name="input")
    zero, one = ops.constant(np.int64([0])), ops.constant(np.int64([1]))
    rows = ops.slice(x, zero, zero, one, ops.constant(np.int64([0])))
    cols = ops.slice(x, zero, zero, one, ops.constant(np.int64([1])))
    rows.output(0).get_tensor().set_names({"rows"})
    cols.output(0).get_tensor().set_names({"cols"})
    return ov.Model([rows, cols], [x], "emptied")


def write_servables(root: Path) -> Path:
    """Every servable above under ``root``; returns the path of the config serving them."""
    sm.save(sm.add_constant([1, 10], 1, "add_one"), root / "add_one")
    sm.save(sm.two_inputs(), root / "two_inputs")
    sm.save(sm.typed_model(), root / "typed")
    sm.save(sm.strings(), root / "strings")
    sm.save(half_model(), root / "half")
    sm.save(sm.identity([-1, -1]), root / "identity")
    sm.save(labelled_model(), root / "labelled")
    sm.save(emptied_model(), root / "emptied")
    for version in (1, 2):
        sm.save(sm.add_constant([1, 10], version, "versioned"), root / "versioned", version)
    models = [
        {"name": name, "base_path": str(root / name), "plugin_config": F32}
        for name in (
            "add_one",
            "two_inputs",
            "typed",
            "strings",
            "half",
            "identity",
            "labelled",
            "emptied",
        )
    ]
    models.append(
        {
            "name": "versioned",
            "base_path": str(root / "versioned"),
            "plugin_config": F32,
            "model_version_policy": {"all": {}},
        }
    )
    add_two = sp.pipeline(
        "add_two",
        ["input"],
        [
            sp.model_node("first", "add_one", {"input": ("request", "input")}, {"output": "once"}),
            sp.model_node("second", "add_one", {"input": ("first", "once")}, {"output": "twice"}),
        ],
        {"output": ("second", "twice")},
    )
    echo = root / "echo"
    echo.mkdir()
    (echo / "graph.pbtxt").write_text(ECHO_GRAPH)
    (echo / "echo.py").write_text(textwrap.dedent(ECHO_HANDLER))
    passthrough = root / "passthrough"
    passthrough.mkdir()
    (passthrough / "graph.pbtxt").write_text(PASSTHROUGH_GRAPH)
    (root / "calculators.py").write_text(CALCULATORS)
    config = {
        "model_config_list": [{"config": model} for model in models],
        "pipeline_config_list": [add_two],
        "mediapipe_config_list": [
            {"name": "echo", "base_path": str(echo)},
            {
                "name": "passthrough",
                "base_path": str(passthrough),
                "calculator_modules": ["../calculators.py"],
            },
        ],
    }
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path
