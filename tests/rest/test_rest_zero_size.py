"""Outputs with a zero in their shape ([0,10], [1,0]) have no bytes: OVMS answers them with
``"data": []`` in JSON and ``binary_data_size`` 0 as binary data, not with an error. The
``emptied`` model slices its input down to such outputs."""

from __future__ import annotations

import json

import numpy as np
import tritonclient.http as triton_http
from rest_process import RestProcess

X = np.arange(10, dtype=np.float32).reshape(1, 10)
REQUEST = {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32", "data": X.tolist()}]}
SHAPES = {"rows": [0, 10], "cols": [1, 0]}


def test_zero_size_outputs_as_json(rest: RestProcess) -> None:
    reply = rest.infer("emptied", REQUEST)
    assert reply.status == 200, reply.body
    outputs = {output["name"]: output for output in reply.json()["outputs"]}
    for name, shape in SHAPES.items():
        assert outputs[name] == {"name": name, "shape": shape, "datatype": "FP32", "data": []}


def test_zero_size_outputs_as_binary_data(rest: RestProcess) -> None:
    document = {**REQUEST, "parameters": {"binary_data_output": True}}
    reply = rest.request("POST", "/v2/models/emptied/infer", json.dumps(document))
    assert reply.status == 200, reply.body
    length = int(reply.headers["inference-header-content-length"])
    assert len(reply.body) == length  # no binary bytes follow the JSON
    outputs = {output["name"]: output for output in json.loads(reply.body)["outputs"]}
    for name, shape in SHAPES.items():
        assert outputs[name]["shape"] == shape
        assert outputs[name]["parameters"] == {"binary_data_size": 0}


def test_zero_size_outputs_through_tritonclient(rest: RestProcess) -> None:
    client = triton_http.InferenceServerClient(rest.url)
    try:
        given = triton_http.InferInput("input", [1, 10], "FP32")
        given.set_data_from_numpy(X, binary_data=True)
        for binary in (False, True):
            outputs = [triton_http.InferRequestedOutput(n, binary_data=binary) for n in SHAPES]
            result = client.infer("emptied", [given], outputs=outputs)
            for name, shape in SHAPES.items():
                array = result.as_numpy(name)
                assert array.shape == tuple(shape), (name, binary)
                assert array.dtype == np.float32
    finally:
        client.close()
