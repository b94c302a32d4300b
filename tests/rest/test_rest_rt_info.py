"""A model's runtime info in REST model metadata: OVMS shows the ``model_info`` section of a
model's rt_info as ``"rt_info": {"model_info": ...}``, after the outputs, every value as text.
The model is saved with it by the OpenVINO Python API (rest_servables.labelled_model)."""

from __future__ import annotations

import grpc
import tritonclient.grpc as triton_grpc
from rest_process import RestProcess
from rest_servables import LABELS


def test_model_info_is_in_rest_metadata(rest: RestProcess) -> None:
    for path in ("/v2/models/labelled", "/v2/models/labelled/versions/1"):
        reply = rest.request("GET", path)
        assert reply.status == 200, reply.body
        document = reply.json()
        assert list(document) == ["name", "versions", "platform", "inputs", "outputs", "rt_info"]
        assert document["rt_info"] == {"model_info": LABELS}
        assert document["outputs"] == [{"name": "output", "datatype": "FP32", "shape": [1, 10]}]


def test_no_rt_info_without_model_info(rest: RestProcess) -> None:
    """A model saved without the section, a pipeline and a graph: no rt_info at all."""
    for name in ("add_one", "add_two", "echo"):
        reply = rest.request("GET", f"/v2/models/{name}")
        assert reply.status == 200, reply.body
        assert "rt_info" not in reply.json(), name


def test_grpc_metadata_has_no_room_for_it(rest: RestProcess) -> None:
    """KServe's ModelMetadataResponse has no rt_info field: gRPC metadata is the usual one."""
    client = triton_grpc.InferenceServerClient(f"127.0.0.1:{rest.port}")
    try:
        metadata = client.get_model_metadata("labelled", as_json=True)
    except grpc.RpcError as error:  # pragma: no cover - the failure message says why
        raise AssertionError(error) from error
    finally:
        client.close()
    assert set(metadata) == {"name", "versions", "platform", "inputs", "outputs"}
    assert metadata["outputs"] == [{"name": "output", "datatype": "FP32", "shape": ["1", "10"]}]
