"""Runs a REST infer request on the servable it names: the same routing, checks and inference
as gRPC's ModelInfer (kserve_service.py), on the event loop.

Routing is OVMS's: a graph of that name, else a pipeline, else a model (whose absence is the
error). Quick models, and pipelines and graphs made only of quick nodes, answer right here
(blocking the loop for less than a hand-off to another thread would cost); the rest are
awaited.
"""

from __future__ import annotations

from typing import NamedTuple

from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.kserve_graph import infer_graph, infer_graph_now
from ovmsx.frontend.request_observer import GRAPH, MODEL, PIPELINE, RequestObserver
from ovmsx.frontend.rest_inputs import RestInput
from ovmsx.frontend.rest_outputs import Output, graph_outputs, tensor_outputs
from ovmsx.metrics.families import MODEL_INFER, REST
from ovmsx.metrics.graph_call import GraphCall
from ovmsx.metrics.inference_meter import DAG_INTERFACE
from ovmsx.servables.graph import Graph
from ovmsx.servables.infer_request import InferRequest, InferResult
from ovmsx.servables.registry import ServableRegistry


class Answer(NamedTuple):
    kind: str
    version: str
    parameters: dict[str, object]
    outputs: list[Output]


async def infer(
    registry: ServableRegistry, request: InferRequest, observer: object | None = None
) -> Answer:
    """``observer``: a ``RequestObserver`` with metrics on counts a graph's call, and a
    pipeline's model calls, as REST's (the outcome itself is reported by the caller)."""
    counting = observer if isinstance(observer, RequestObserver) and observer.counting else None
    dispatcher = registry.dispatcher
    dispatcher.requests_on_loop += 1
    try:
        name = request.servable_name
        graph = registry.graphs.get(name)
        if graph is not None:
            return await _graph_answer(registry, graph, request, counting)
        pipeline = registry.pipelines.get(name)
        if pipeline is not None:
            token = DAG_INTERFACE.set(REST if counting is not None else None)
            try:
                result = registry.infer_pipeline_now(pipeline, request)
                if result is None:
                    result = await registry.infer_pipeline(pipeline, request)
            finally:
                DAG_INTERFACE.reset(token)
            return _answer(PIPELINE, result)
        result = registry.infer_now(request)
        if result is None:
            result = await registry.infer(request)
        return _answer(MODEL, result)
    finally:
        dispatcher.requests_on_loop -= 1


def _answer(kind: str, result: InferResult) -> Answer:
    return Answer(kind, str(result.version), {}, tensor_outputs(result.outputs))


async def _graph_answer(
    registry: ServableRegistry,
    graph: Graph,
    request: InferRequest,
    observer: RequestObserver | None,
) -> Answer:
    if graph.passthrough:
        # The graph takes the whole request as a ModelInferRequest, as it would over gRPC.
        request.message = _as_grpc_request(request)
    answer = infer_graph_now(graph, request, _graph_call(observer, graph))
    if answer is None:  # (the call above then ended uncounted)
        call = _graph_call(observer, graph)
        answer = await infer_graph(graph, request, registry.graph_workers, call)
    response, outputs = graph_outputs(answer)
    parameters = {key: _parameter(value) for key, value in response.parameters.items()}
    return Answer(GRAPH, response.model_version, parameters, outputs)


def _graph_call(observer: RequestObserver | None, graph: Graph) -> GraphCall | None:
    return None if observer is None else observer.graph_call(REST, MODEL_INFER, graph.name)


def _parameter(parameter: pb.InferParameter) -> object:
    choice = parameter.WhichOneof("parameter_choice")
    return getattr(parameter, choice) if choice else None


def _as_grpc_request(request: InferRequest) -> bytes:
    message = pb.ModelInferRequest(
        model_name=request.servable_name, model_version=request.version, id=request.id
    )
    for key, value in request.parameters.items():
        slot = message.parameters[key]
        if isinstance(value, bool):
            slot.bool_param = value
        elif isinstance(value, int):
            slot.int64_param = value
        else:
            slot.string_param = str(value)
    for given in request.inputs:
        assert isinstance(given, RestInput)
        message.inputs.add(name=given.name, datatype=given.datatype, shape=given.shape)
        message.raw_input_contents.append(bytes(given.data()))
    for name in request.requested_outputs:
        message.outputs.add(name=name)
    return message.SerializeToString()
