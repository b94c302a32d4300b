"""Real REST clients nobody here wrote: tritonclient.http (JSON and binary data) and kserve's
``InferenceRESTClient``, on models, a pipeline and a graph."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient
from rest_process import RestProcess
from tritonclient.utils import InferenceServerException


@pytest.fixture(scope="module")
def triton(rest: RestProcess) -> Iterator[httpclient.InferenceServerClient]:
    client = httpclient.InferenceServerClient(rest.url)
    yield client
    client.close()


def _input(name: str, data: np.ndarray, datatype: str, binary: bool) -> httpclient.InferInput:
    given = httpclient.InferInput(name, list(data.shape), datatype)
    given.set_data_from_numpy(data, binary_data=binary)
    return given


def test_triton_health_and_metadata(triton: httpclient.InferenceServerClient) -> None:
    assert triton.is_server_live()
    assert triton.is_server_ready()
    assert triton.is_model_ready("add_one")
    assert triton.is_model_ready("versioned", "2")
    assert not triton.is_model_ready("nothing")
    assert triton.get_server_metadata()["name"] == "OpenVINO Model Server"
    metadata = triton.get_model_metadata("add_one")
    assert metadata["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [1, 10]}]


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
@pytest.mark.parametrize("model", ["add_one", "add_two"])
def test_triton_infer(triton: httpclient.InferenceServerClient, model: str, binary: bool) -> None:
    data = np.arange(10, dtype=np.float32).reshape(1, 10)
    outputs = [httpclient.InferRequestedOutput("output", binary_data=binary)]
    result = triton.infer(model, [_input("input", data, "FP32", binary)], outputs=outputs)
    added = 1 if model == "add_one" else 2
    np.testing.assert_array_equal(result.as_numpy("output"), data + added)
    assert result.get_response()["model_name"] == model


def test_triton_without_requested_outputs_gets_binary_data(
    triton: httpclient.InferenceServerClient,
) -> None:
    # tritonclient then asks for binary_data_output on every output. (Its inputs are all binary
    # or all JSON: OVMS refuses a request mixing the two.)
    data = np.ones((1, 4), np.float32)
    inputs = [_input("a", data, "FP32", True), _input("b", data * 3, "FP32", True)]
    result = triton.infer("two_inputs", inputs)
    outputs = {o["name"]: o for o in result.get_response()["outputs"]}
    assert outputs["sum"]["parameters"] == {"binary_data_size": 16}
    np.testing.assert_array_equal(result.as_numpy("sum"), data * 4)
    np.testing.assert_array_equal(result.as_numpy("diff"), data * -2)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_triton_strings_and_a_graph(triton: httpclient.InferenceServerClient, binary: bool):
    words = np.array([b"alpha", "βeta".encode()], dtype=np.object_)
    outputs = [httpclient.InferRequestedOutput("twice", binary_data=binary)]
    result = triton.infer("strings", [_input("text", words, "BYTES", binary)], outputs=outputs)
    # tritonclient gives JSON strings back as str, binary ones as bytes.
    got = [w if isinstance(w, str) else w.decode() for w in result.as_numpy("twice").tolist()]
    assert got == ["alpha", "βeta"] * 2
    numbers = np.array([[1, -2, 3]], np.int16)
    outputs = [httpclient.InferRequestedOutput("out", binary_data=binary)]
    result = triton.infer("echo", [_input("in", numbers, "INT16", binary)], outputs=outputs)
    np.testing.assert_array_equal(result.as_numpy("out"), numbers)


def test_triton_fp16_both_ways(triton: httpclient.InferenceServerClient) -> None:
    data = np.array([0.5, 1.5, -8.0], np.float16)
    for binary in (False, True):
        outputs = [httpclient.InferRequestedOutput("output", binary_data=binary)]
        result = triton.infer("half", [_input("input", data, "FP16", binary)], outputs=outputs)
        np.testing.assert_array_equal(result.as_numpy("output"), data)


def test_triton_sees_ovms_errors(triton: httpclient.InferenceServerClient) -> None:
    data = np.ones((1, 9), np.float32)
    with pytest.raises(InferenceServerException) as shape:
        triton.infer("add_one", [_input("input", data, "FP32", True)])
    assert shape.value.status() == "400"
    assert shape.value.message().startswith("Invalid input shape")
    with pytest.raises(InferenceServerException) as missing:
        triton.infer("nothing", [_input("input", data, "FP32", True)])
    assert missing.value.status() == "404"
    assert missing.value.message().startswith("Model with requested name is not found")


def test_kserve_rest_client(rest: RestProcess) -> None:
    """kserve's client runs in a process of its own: its protobuf module declares the KServe
    messages again, which the descriptor pool refuses beside tritonclient's."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("kserve_client_run.py")), rest.url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["health"] == [True, True, True, False]
    for model, added in (("add_one", 1), ("add_two", 2)):
        answer = seen[model]
        assert (answer["model_name"], answer["id"]) == (model, "k-1")
        assert answer["output"] == [float(v + added) for v in range(10)]
    assert seen["echo_binary"] == [3, 1, 4]
    assert seen["missing"].startswith("Model with requested name is not found")
