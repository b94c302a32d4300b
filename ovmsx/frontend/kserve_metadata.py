"""ModelMetadataResponse for a model version (KServe v2 "Model Metadata")."""

from __future__ import annotations

from ovmsx import _core
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.pipeline.ports import PortSpec
from ovmsx.servables.graph import Graph
from ovmsx.servables.pipeline import Pipeline
from ovmsx.servables.registry import ServableRegistry

PLATFORM = "OpenVINO"  # what OVMS reports for models and graphs


def _shape(port: _core.PortInfo) -> list[int]:
    # KServe has no ranges: any dimension that is not one fixed size is -1, as in OVMS.
    return [low if low == high else -1 for low, high in port.dims]


def _tensors(ports: list[_core.PortInfo]) -> list[pb.ModelMetadataResponse.TensorMetadata]:
    return [
        pb.ModelMetadataResponse.TensorMetadata(
            name=port.name, datatype=port.datatype, shape=_shape(port)
        )
        for port in sorted(ports, key=lambda p: p.name)
    ]


def model_metadata(registry: ServableRegistry, name: str, version: str) -> pb.ModelMetadataResponse:
    return model_metadata_and_info(registry, name, version)[0]


def model_metadata_and_info(
    registry: ServableRegistry, name: str, version: str
) -> tuple[pb.ModelMetadataResponse, dict[str, object] | None]:
    """A model version's metadata, and the model_info of its rt_info (or None), both of the
    one version that answers. KServe's ModelMetadataResponse has no field for the latter:
    only REST shows it."""
    found = registry.serving_version(name, version)
    compiled = found.compiled
    assert compiled is not None  # serving_version only returns available versions
    model = registry.model(name)
    versions = sorted({found.version, *model.available_versions()})
    response = pb.ModelMetadataResponse(
        name=name,
        versions=[str(v) for v in versions],
        platform=PLATFORM,
        inputs=_tensors(compiled.inputs),
        outputs=_tensors(compiled.outputs),
    )
    return response, compiled.model_info


def graph_metadata(graph: Graph, version: str) -> pb.ModelMetadataResponse:
    """A graph's metadata: version 1; a stream that reaches a model through an inference node
    reports the model's datatype and shape, any other one OVMS's datatype "INVALID" and no
    shape (a graph's streams have no declared types)."""
    graph.check_version(version)
    graph.serving_plan()  # an unavailable graph answers with its reason
    inputs, outputs = graph.ports()
    return pb.ModelMetadataResponse(
        name=graph.name,
        versions=["1"],
        platform=PLATFORM,
        inputs=[_graph_tensor(name, inputs.get(name)) for name in graph.inputs],
        outputs=[_graph_tensor(name, outputs.get(name)) for name in graph.outputs],
    )


def _graph_tensor(name: str, port) -> pb.ModelMetadataResponse.TensorMetadata:
    if port is None or not port.datatype:
        return pb.ModelMetadataResponse.TensorMetadata(name=name, datatype="INVALID")
    shape = [] if port.rank_dynamic else port.shape()
    return pb.ModelMetadataResponse.TensorMetadata(name=name, datatype=port.datatype, shape=shape)


def pipeline_metadata(pipeline: Pipeline, version: str) -> pb.ModelMetadataResponse:
    """A pipeline's inputs and outputs as its nodes declare them; version 1."""
    pipeline.check_version(version)
    definition, _ = pipeline.serving()
    return pb.ModelMetadataResponse(
        name=pipeline.name,
        versions=["1"],
        platform=PLATFORM,
        inputs=_specs(definition.inputs.values()),
        outputs=_specs(definition.outputs.values()),
    )


def _specs(ports) -> list[pb.ModelMetadataResponse.TensorMetadata]:
    return [
        pb.ModelMetadataResponse.TensorMetadata(
            name=port.name, datatype=port.datatype, shape=port.shape()
        )
        for port in sorted(ports, key=lambda p: p.name)
        if isinstance(port, PortSpec)
    ]
