"""KServe calls answered by graphs: unary ModelInfer and streaming ModelStreamInfer.

Unary: one graph instance per request, fed once, run to the end; the answer holds the first
packet of every graph output. Streaming: one instance per stream, fed by every request, and
every output packet is sent as soon as it exists. Departures from OVMS, all in the client's
favour: a node failure ends the stream at once with its error (OVMS reports it only when the
next request arrives), and the instance is gone, so a new stream can start immediately.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING

from ovmsx import _core
from ovmsx.frontend import grpc_predict_v2_pb2 as pb
from ovmsx.frontend.grpc_status import status_message
from ovmsx.frontend.kserve_codec import (
    decode_infer_request,
    encode_graph_response,
    encode_stream_error,
    wrap_stream_response,
)
from ovmsx.graph.graph_workers import WorkerPool
from ovmsx.graph.packet import Packet
from ovmsx.images.off_loop import off_loop
from ovmsx.metrics.families import GRPC, MODEL_INFER_STREAM
from ovmsx.quoting import quote
from ovmsx.servables.graph import Graph
from ovmsx.servables.graph_execution import GraphSession
from ovmsx.servables.graph_packets import (
    StreamKind,
    image_packet,
    mediapipe_tensor_packet,
    response_tensor,
)
from ovmsx.servables.graph_requests import (
    TIMESTAMP_PARAMETER,
    clock_timestamp,
    request_timestamp,
    side_packets,
)
from ovmsx.servables.infer_request import InferRequest
from ovmsx.status import StatusCode, StatusError, status_error

if TYPE_CHECKING:
    from ovmsx.frontend.request_observer import RequestObserver
    from ovmsx.metrics.graph_call import GraphCall

log = logging.getLogger("ovmsx.frontend")

# The side packets of a request without parameters (each run copies them).
_PLAIN_SIDE_PACKETS = MappingProxyType(side_packets({}))

FIRST = "; partial deserialization of first request"
LATER = "; partial deserialization of subsequent requests"


def graph_inputs(graph: Graph, request: InferRequest, complete: bool) -> list[tuple[str, object]]:
    """(stream, packet) for every request input; ``complete`` requires all graph inputs."""
    if graph.passthrough:
        # The whole request is the one packet (COMPAT §4.2); its inputs are the calculator's.
        stream = next(iter(graph.inputs))
        return [(stream, pb.ModelInferRequest.FromString(request.message or b""))]
    packets = []
    for given in request.inputs:
        kind = graph.inputs.get(given.name)
        if kind is None:
            raise status_error(
                StatusCode.INVALID_UNEXPECTED_INPUT, f"{quote(given.name)} is unexpected"
            )
        packets.append((given.name, _packet(kind, given)))
    if complete and len({name for name, _ in packets}) < len(graph.inputs):
        missing = sorted(set(graph.inputs) - {name for name, _ in packets})
        raise status_error(
            StatusCode.INVALID_NO_OF_INPUTS,
            f"Not all input packets created; missing: {', '.join(missing)}",
        )
    return packets


def _packet(kind: StreamKind, given) -> object:
    if kind is StreamKind.IMAGE and given.datatype == "BYTES":
        # An encoded file (beyond OVMS); imported here so that OpenCV loads on first use.
        from ovmsx.images.graph_frame import encoded_frame

        return encoded_frame(given)
    tensor = given.to_graph_tensor(kind is StreamKind.PYTHON)
    if kind is StreamKind.IMAGE:
        return image_packet(tensor, given.is_raw, given.name)
    if kind is StreamKind.MP_TENSOR:
        return mediapipe_tensor_packet(tensor, given.is_raw, given.name)
    return tensor


def _response(graph: Graph, request_id: str, packets: list[tuple[str, Packet]]) -> bytes:
    """The answer for ``(stream, packet)`` pairs: their tensors, or a RESPONSE packet whole."""
    if graph.passthrough:
        (stream, packet), *_ = packets
        return _whole_response(graph.name, request_id, stream, packet)
    kinds = graph.outputs
    outputs = [response_tensor(kinds[name], name, packet.value) for name, packet in packets]
    stamp = max([packet.timestamp for _, packet in packets])
    return encode_graph_response(graph.name, request_id, stamp, outputs)


def _whole_response(graph: str, request_id: str, stream: str, packet: Packet) -> bytes:
    """A RESPONSE packet as the answer; like OVMS, the server still sets the graph's name,
    version "1", the request id and ``OVMS_MP_TIMESTAMP`` on it."""
    value = packet.value
    descriptor = getattr(value, "DESCRIPTOR", None)
    if getattr(descriptor, "full_name", None) != pb.ModelInferResponse.DESCRIPTOR.full_name:
        raise status_error(
            StatusCode.MEDIAPIPE_EXECUTION_ERROR,
            f"output stream {stream} carries {type(value).__name__}, not a ModelInferResponse",
        )
    # Any class of that message will do (tritonclient's, ours): go through its bytes.
    response = pb.ModelInferResponse.FromString(value.SerializeToString())
    response.model_name = graph
    response.model_version = "1"
    response.id = request_id
    response.parameters[TIMESTAMP_PARAMETER].int64_param = packet.timestamp
    return response.SerializeToString()


async def infer_graph(
    graph: Graph, request: InferRequest, workers: WorkerPool, call: GraphCall | None = None
) -> bytes:
    """The answer of one graph instance; ``call`` counts it (metrics)."""
    try:
        if _decodes(graph, request):  # encoded images: decoded off the loop
            plan, sides, inputs, timestamp = await off_loop(_unary_run, graph, request, call)
        else:
            plan, sides, inputs, timestamp = _unary_run(graph, request, call)
        assert graph.runner is not None  # serving_plan() only returns for a loaded graph
        first = await graph.runner.run(workers, sides, inputs, timestamp)
        answer = _response(graph, request.id, [(name, first[name]) for name in plan.output_streams])
    except BaseException:
        if call is not None:
            call.end(False)
        raise
    if call is not None:
        call.responded()
        call.end(True)
    return answer


def infer_graph_now(
    graph: Graph, request: InferRequest, call: GraphCall | None = None
) -> bytes | None:
    """The answer on the caller's thread when the graph runs in one pass of quick nodes
    (``UnaryRunner.runs_now``); None when it must run as ``infer_graph`` (``call`` then ends
    uncounted: the run that answers counts)."""
    runner = graph.runner
    if runner is None or not runner.runs_now or _decodes(graph, request):
        if call is not None:
            call.end(False)
        return None
    return _run_now(graph, runner, partial(_unary_run, graph, request, call), request.id, call)


def raw_graph_inputs(graph: Graph, tensors: list[_core.Tensor]) -> list[tuple[str, object]] | None:
    """(stream, packet) for the raw inputs of a plain request that the core read
    (``_core.read_raw_inputs``), when they are exactly the graph's inputs, all Python tensors,
    and the graph runs now; None otherwise: the general path then answers, and words every
    error. Python nodes take raw inputs as they are, so the core's Tensors are the packets."""
    runner = graph.runner
    if runner is None or not runner.runs_now or not graph.tensor_inputs:
        return None
    inputs = [(tensor.name, tensor) for tensor in tensors]
    expected = graph.inputs
    if len(inputs) != len(expected) or {name for name, _ in inputs} != expected.keys():
        return None
    return inputs


def infer_raw_graph_now(
    graph: Graph,
    version: str,
    request_id: str,
    inputs: list[tuple[str, object]],
    call: GraphCall | None = None,
) -> bytes:
    """``infer_graph_now`` for a request read by the core, its inputs from ``raw_graph_inputs``."""
    runner = graph.runner
    assert runner is not None  # raw_graph_inputs checked it
    prepare = partial(_raw_run, graph, version, inputs, call)
    return _run_now(graph, runner, prepare, request_id, call)


def _raw_run(graph: Graph, version: str, inputs: list[tuple[str, object]], call):
    """``_unary_run`` for a plain request: no parameters, so no side packets and the clock's
    timestamp; its inputs were checked by ``raw_graph_inputs``."""
    graph.check_version(version)
    plan = graph.serving_plan()
    if call is not None:
        call.accepted()
    return plan, _PLAIN_SIDE_PACKETS, inputs, clock_timestamp()


def _run_now(graph: Graph, runner, prepare: Callable[[], tuple], request_id: str, call) -> bytes:
    """One pass on this thread of the run ``prepare()`` gives (plan, side packets, inputs,
    timestamp); the answer, counted on ``call``, which ends exactly once."""
    try:
        plan, sides, inputs, timestamp = prepare()
        first = runner.run_now(sides, inputs, timestamp)
        answer = _response(graph, request_id, [(name, first[name]) for name in plan.output_streams])
    except BaseException:
        if call is not None:
            call.end(False)
        raise
    if call is not None:
        call.responded()
        call.end(True)
    return answer


def _decodes(graph: Graph, request: InferRequest) -> bool:
    """Whether the request sends an encoded image to an IMAGE input: milliseconds of
    decoding, for a thread of its own rather than the gRPC polling thread or the loop."""
    inputs = graph.inputs
    return any(
        given.datatype == "BYTES" and inputs.get(given.name) is StreamKind.IMAGE
        for given in request.inputs
    )


def _unary_run(graph: Graph, request: InferRequest, call: GraphCall | None):
    """What one unary run needs: the plan, side packets, input packets and timestamp. As in
    OVMS, a request the graph cannot serve (version, not loaded) is not counted; one whose
    packets cannot be made is rejected; the rest are accepted."""
    graph.check_version(request.version)
    plan = graph.serving_plan()
    try:
        timestamp = request_timestamp(request.parameters)
        if timestamp is None:
            timestamp = clock_timestamp()
        sides = side_packets(request.parameters)
        inputs = graph_inputs(graph, request, complete=True)
    except StatusError:
        if call is not None:
            call.rejected()
        raise
    if call is not None:
        call.accepted()
    return plan, sides, inputs, timestamp


class GraphStream:
    """One ModelStreamInfer call served by one graph instance."""

    def __init__(
        self,
        graph: Graph,
        first: InferRequest,
        workers: WorkerPool,
        observer: RequestObserver | None = None,
    ) -> None:
        graph.check_version(first.version)
        self._graph = graph
        self._first: InferRequest | None = first
        self._responses: asyncio.Queue[bytes | StatusError | None] = asyncio.Queue()
        self._session = GraphSession(
            graph.serving_plan(),
            side_packets(first.parameters),
            workers,
            self._on_packet,
            self._on_reject,
            self._on_end,
        )
        self._last_timestamp: int | None = None
        # Counts the stream (metrics on): from here on, it ends exactly once (``_on_end``).
        self._call = (
            None if observer is None else observer.graph_call(GRPC, MODEL_INFER_STREAM, graph.name)
        )

    async def responses(self, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes | StatusError]:
        """Every response to send, in order; a StatusError ends the call with that status."""
        reader = asyncio.create_task(self._read(rest))
        try:
            while (item := await self._responses.get()) is not None:
                yield item
                if isinstance(item, StatusError):
                    return
        finally:
            reader.cancel()
            self._session.cancel()

    async def _read(self, rest: AsyncIterator[bytes]) -> None:
        try:
            # The stream and its graph instance reference each other until the collector
            # runs; the first request (and the message it views) must not wait for that.
            first, self._first = self._first, None
            assert first is not None
            self._feed(first, FIRST)
            del first
            async for message in rest:
                self._take(message)
                del message  # not kept while the next request is awaited
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the client's side broke: end the instance
            log.debug("stream read ended: %r", error)
            self._session.cancel()
            return
        self._session.close()

    def _take(self, message: bytes) -> None:
        try:
            request = decode_infer_request(message)
        except StatusError as error:
            if self._call is not None:
                self._call.rejected()
            self._reply_error(status_message(error) + LATER)
            return
        self._feed(request, LATER)

    def _feed(self, request: InferRequest, suffix: str) -> None:
        graph = self._graph
        try:
            if request.servable_name != graph.name:
                raise status_error(
                    StatusCode.MEDIAPIPE_INCORRECT_SERVABLE_NAME,
                    f"stream serves {graph.name}, request names {quote(request.servable_name)}",
                )
            if request.version not in ("", "0", "1"):
                raise status_error(
                    StatusCode.MEDIAPIPE_INCORRECT_SERVABLE_VERSION,
                    f"graphs have version 1, request names {quote(request.version)}",
                )
            timestamp = request_timestamp(request.parameters)
            if timestamp is None:
                timestamp = clock_timestamp(self._last_timestamp)
            inputs = graph_inputs(graph, request, complete=False)
        except StatusError as error:
            if self._call is not None:
                self._call.rejected()
            self._reply_error(status_message(error) + suffix, request)
            return
        if self._last_timestamp is None or timestamp > self._last_timestamp:
            self._last_timestamp = timestamp
        self._session.submit(inputs, timestamp)
        if self._call is not None:
            # Handed to the instance; if it then refuses the packets (``_on_reject``), the
            # request is counted as rejected too.
            self._call.accepted()

    def _reply_error(self, message: str, request: InferRequest | None = None) -> None:
        """An error reply naming the request it answers (its id and servable name). When the
        request is not known (unreadable, or refused later by the graph, which does not say
        which request fed the packets), it names the graph only."""
        if request is None:
            reply = encode_stream_error(message, "", self._graph.name)
        else:
            reply = encode_stream_error(message, request.id, request.servable_name)
        self._responses.put_nowait(reply)

    # -- from the graph instance (on the loop) ---------------------------------------------

    def _on_packet(self, stream: str, packet: Packet) -> None:
        try:
            response = _response(self._graph, "", [(stream, packet)])
        except StatusError as error:
            self._end_call(False)
            self._responses.put_nowait(error)
            return
        if self._call is not None:
            self._call.responded()
        self._responses.put_nowait(wrap_stream_response(response))

    def _on_reject(self, error: StatusError) -> None:
        if self._call is not None:
            self._call.rejected()
        self._reply_error(status_message(error))

    def _on_end(self, error: StatusError | None) -> None:
        self._end_call(error is None)
        self._responses.put_nowait(error)

    def _end_call(self, ok: bool) -> None:
        call, self._call = self._call, None
        if call is not None:
            call.end(ok)
