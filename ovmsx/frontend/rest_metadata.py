"""Server and model metadata as KServe v2 REST JSON.

The content is gRPC's (kserve_metadata.py builds it); the JSON is what OVMS prints for it:
protobuf's JSON form with shapes as numbers and empty shapes kept (a scalar has ``[]``). A model
whose runtime info has a ``model_info`` section gets it too, after the outputs, as
``"rt_info": {"model_info": {...}}``: nested sections as objects, values as strings. Pipelines
and graphs have none, as in OVMS.
"""

from __future__ import annotations

from ovmsx import __version__
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.kserve_metadata import (
    graph_metadata,
    model_metadata_and_info,
    pipeline_metadata,
)
from ovmsx.frontend.kserve_service import SERVER_NAME
from ovmsx.frontend.request_observer import GRAPH, MODEL, PIPELINE
from ovmsx.servables.registry import ServableRegistry


def server_metadata() -> dict[str, object]:
    return {"name": SERVER_NAME, "version": __version__}


def servable_metadata(
    registry: ServableRegistry, name: str, version: str
) -> tuple[str, dict[str, object]]:
    """The kind of servable ``name`` is, and its metadata (OVMS's errors when there is none)."""
    graph = registry.graphs.get(name)
    if graph is not None:
        return GRAPH, _json(graph_metadata(graph, version))
    pipeline = registry.pipelines.get(name)
    if pipeline is not None:
        return PIPELINE, _json(pipeline_metadata(pipeline, version))
    response, model_info = model_metadata_and_info(registry, name, version)
    document = _json(response)
    if model_info is not None:
        document["rt_info"] = {"model_info": model_info}
    return MODEL, document


def _json(response: pb.ModelMetadataResponse) -> dict[str, object]:
    return {
        "name": response.name,
        "versions": list(response.versions),
        "platform": response.platform,
        "inputs": [_tensor(t) for t in response.inputs],
        "outputs": [_tensor(t) for t in response.outputs],
    }


def _tensor(tensor: pb.ModelMetadataResponse.TensorMetadata) -> dict[str, object]:
    return {"name": tensor.name, "datatype": tensor.datatype, "shape": list(tensor.shape)}
