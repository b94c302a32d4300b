"""Known gRPC requests to a real server (tritonclient), then its exposition: exactly those counts.

One server, one batch of requests sent before any test reads; every test checks part of what
the exposition must say about them.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from metrics_servers import InProcessServer, samples, value, write_config
from tritonclient.utils import InferenceServerException

from ovmsx.metrics.families import BUCKETS_US, KNOWN_FAMILIES

MODEL_OK = 12  # enough for add_one to be measured quick and answered on gRPC's polling thread
MODEL_BAD = 3
PIPELINE_OK = 4
PIPELINE_BAD = 1
PER_ROW_OK = 2
ROWS = 3
GRAPH_OK = 3
GRAPH_BAD = 2
FAILING = 2
NIREQ = 3


def _input(name: str = "input", shape: tuple[int, ...] = (1, 10)) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, list(shape), "FP32")
    given.set_data_from_numpy(np.ones(shape, np.float32))
    return given


def _refused(client: grpcclient.InferenceServerClient, call, *args, **kwargs) -> None:
    with pytest.raises(InferenceServerException):
        getattr(client, call)(*args, **kwargs)


def _send(client: grpcclient.InferenceServerClient) -> None:
    for _ in range(MODEL_OK):
        client.infer("add_one", [_input()])
    _refused(client, "infer", "add_one", [_input("wrong_name")])
    _refused(client, "infer", "add_one", [_input(shape=(1, 3))])
    _refused(client, "infer", "add_one", [_input()], model_version="1", outputs=[
        grpcclient.InferRequestedOutput("no_such_output")
    ])  # fmt: skip
    # Not counted anywhere: an unknown version, an unknown name, a version that is no number.
    _refused(client, "infer", "add_one", [_input()], model_version="7")
    _refused(client, "infer", "no_such_servable", [_input()])
    _refused(client, "infer", "add_one", [_input()], model_version="x")
    for _ in range(3):
        client.get_model_metadata("add_one")
    client.get_model_metadata("add_one", "1")
    client.is_model_ready("add_one")
    client.is_model_ready("add_one", "1")
    _refused(client, "get_model_metadata", "add_one", "5")  # an unknown version: not counted

    for _ in range(PIPELINE_OK):
        client.infer("add_two", [_input()])
    for _ in range(PER_ROW_OK):
        client.infer("per_row", [_input("rows", (ROWS, 1, 10))])
    _refused(client, "infer", "add_two", [_input(shape=(1, 4))])
    client.get_model_metadata("add_two")
    client.is_model_ready("add_two")

    for _ in range(GRAPH_OK):
        client.infer("echo", [_input()])
    for _ in range(GRAPH_BAD):
        _refused(client, "infer", "echo", [_input("unexpected")])
    _refused(client, "infer", "echo", [_input()], model_version="2")  # not counted
    client.get_model_metadata("echo")
    client.is_model_ready("echo")
    client.is_model_ready("echo")
    for _ in range(FAILING):
        _refused(client, "infer", "failing", [_input()])


def _stream(client: grpcclient.InferenceServerClient) -> None:
    """One stream to echo: two requests it answers, one it refuses."""
    answers: queue.Queue = queue.Queue()
    client.start_stream(lambda result, error: answers.put((result, error)))
    try:
        client.async_stream_infer("echo", [_input()])
        client.async_stream_infer("echo", [_input("unexpected")])
        client.async_stream_infer("echo", [_input()])
        outcomes = [answers.get(timeout=60) for _ in range(3)]
    finally:
        client.stop_stream()
    assert sorted(error is None for _, error in outcomes) == [False, True, True]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    config = write_config(tmp_path_factory.mktemp("metrics"), nireq=NIREQ)
    running = InProcessServer(config, KNOWN_FAMILIES)
    try:
        with grpcclient.InferenceServerClient(running.url) as client:
            _send(client)
            _stream(client)
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def found(server: InProcessServer) -> dict:
    # The stream's instance ends on the server's loop after the client has closed it: wait for
    # the gauge to show it ended (the gauge itself is one of the things checked).
    for _ in range(200):
        text = server.exposition()[0].decode()
        if value(samples(text), "ovms_current_graphs", name="echo") == 0:
            break
        server.on_loop(lambda: None)
    return samples(text)


def _requests(found: dict, outcome: str, method: str, servable: str, **labels: str) -> float:
    labels = {"api": "KServe", "interface": "gRPC", "method": method, "name": servable, **labels}
    return value(found, f"ovms_requests_{outcome}_total", **labels)


# Each add_two request runs add_one twice, each per_row request once per row: OVMS counts those
# calls on add_one, on the interface of the pipeline request.
DAG_CALLS = 2 * PIPELINE_OK + ROWS * PER_ROW_OK


def test_model_inference_counts(found: dict) -> None:
    ok = _requests(found, "success", "ModelInfer", "add_one", version="1")
    assert ok == MODEL_OK + DAG_CALLS
    assert _requests(found, "fail", "ModelInfer", "add_one", version="1") == MODEL_BAD


def test_model_request_time_counts_direct_successes(found: dict) -> None:
    labels = {"interface": "gRPC", "name": "add_one", "version": "1"}
    assert value(found, "ovms_request_time_us_count", **labels) == MODEL_OK
    assert value(found, "ovms_request_time_us_sum", **labels) > 0
    rest = {**labels, "interface": "REST"}
    assert value(found, "ovms_request_time_us_count", **rest) == 0


def test_model_inference_histograms(found: dict) -> None:
    labels = {"name": "add_one", "version": "1"}
    inferences = MODEL_OK + DAG_CALLS
    assert value(found, "ovms_inference_time_us_count", **labels) == inferences
    assert value(found, "ovms_inference_time_us_sum", **labels) > 0
    assert value(found, "ovms_wait_for_infer_req_time_us_count", **labels) == inferences
    infinity = value(found, "ovms_inference_time_us_bucket", le="+Inf", **labels)
    assert infinity == inferences


def test_model_metadata_and_ready_counts(found: dict) -> None:
    assert _requests(found, "success", "ModelMetadata", "add_one", version="1") == 4
    assert _requests(found, "fail", "ModelMetadata", "add_one", version="1") == 0
    # ModelReady has no version label.
    assert _requests(found, "success", "ModelReady", "add_one") == 2
    with pytest.raises(KeyError):
        _requests(found, "success", "ModelReady", "add_one", version="1")


def test_model_gauges(found: dict) -> None:
    labels = {"name": "add_one", "version": "1"}
    assert value(found, "ovms_streams", **labels) >= 1
    assert value(found, "ovms_infer_req_queue_size", **labels) == NIREQ
    assert value(found, "ovms_current_requests", **labels) == 0
    assert value(found, "ovms_infer_req_active", **labels) == 0


def test_pipeline_counts(found: dict) -> None:
    assert _requests(found, "success", "ModelInfer", "per_row", version="1") == PER_ROW_OK
    assert _requests(found, "success", "ModelInfer", "add_two", version="1") == PIPELINE_OK
    assert _requests(found, "fail", "ModelInfer", "add_two", version="1") == PIPELINE_BAD
    labels = {"interface": "gRPC", "name": "add_two", "version": "1"}
    assert value(found, "ovms_request_time_us_count", **labels) == PIPELINE_OK
    assert _requests(found, "success", "ModelMetadata", "add_two", version="1") == 1
    assert _requests(found, "success", "ModelReady", "add_two") == 1


def test_pipelines_have_no_inference_series(found: dict) -> None:
    names = {dict(labels).get("name") for (sample, labels) in found if "inference" in sample}
    assert names == {"add_one"}


def test_graph_unary_counts(found: dict) -> None:
    def graph(family: str, servable: str = "echo") -> float:
        labels = {"api": "KServe", "interface": "gRPC", "method": "ModelInfer", "name": servable}
        return value(found, f"{family}_total", **labels)

    assert graph("ovms_requests_accepted") == GRAPH_OK
    assert graph("ovms_requests_rejected") == GRAPH_BAD
    assert graph("ovms_responses") == GRAPH_OK
    assert graph("ovms_graph_error") == 0
    processing = value(
        found, "ovms_graph_processing_time_us_count", method="ModelInfer", name="echo"
    )
    assert processing == GRAPH_OK
    # A node failing after its request was accepted is a graph error, and no response.
    assert graph("ovms_requests_accepted", "failing") == FAILING
    assert graph("ovms_graph_error", "failing") == FAILING
    assert graph("ovms_responses", "failing") == 0


def test_graph_stream_counts(found: dict) -> None:
    labels = {"api": "KServe", "interface": "gRPC", "method": "ModelInferStream", "name": "echo"}
    assert value(found, "ovms_requests_accepted_total", **labels) == 2
    assert value(found, "ovms_requests_rejected_total", **labels) == 1
    assert value(found, "ovms_responses_total", **labels) == 2
    assert value(found, "ovms_graph_error_total", **labels) == 0
    stream = {"method": "ModelInferStream", "name": "echo"}
    assert value(found, "ovms_graph_processing_time_us_count", **stream) == 1
    assert value(found, "ovms_current_graphs", name="echo") == 0


def test_graph_inference_is_not_a_request_count(found: dict) -> None:
    """Graphs count ModelMetadata and ModelReady in ovms_requests_*, never ModelInfer."""
    assert _requests(found, "success", "ModelMetadata", "echo") == 1
    assert _requests(found, "success", "ModelReady", "echo") == 2
    with pytest.raises(KeyError):
        _requests(found, "success", "ModelInfer", "echo")
    with pytest.raises(KeyError):
        _requests(found, "success", "ModelInfer", "echo", version="1")


def test_v3_series_exist_and_stay_zero(found: dict) -> None:
    for method in ("Unary", "Stream"):
        labels = {"api": "V3", "interface": "REST", "method": method, "name": "echo"}
        assert value(found, "ovms_requests_accepted_total", **labels) == 0
        assert value(found, "ovms_graph_processing_time_us_count", method=method, name="echo") == 0


def test_rest_series_exist_for_every_servable(found: dict) -> None:
    for name in ("add_one", "add_two"):
        labels = {"api": "KServe", "interface": "REST", "name": name}
        assert value(found, "ovms_requests_success_total", method="ModelReady", **labels) == 0
        ok = value(found, "ovms_requests_success_total", method="ModelInfer", version="1", **labels)
        assert ok == 0


def test_unknown_servables_have_no_series(found: dict) -> None:
    names = {dict(labels).get("name") for _, labels in found}
    assert names == {"add_one", "add_two", "per_row", "echo", "failing"}
    versions = {dict(labels).get("version") for _, labels in found} - {None}
    assert versions == {"1"}


def test_histogram_buckets_are_ovms_bounds(found: dict) -> None:
    labels = frozenset({("name", "add_one"), ("version", "1")})
    bounds = [
        dict(sample_labels)["le"]
        for (sample, sample_labels) in found
        if sample == "ovms_inference_time_us_bucket" and labels <= sample_labels
    ]
    assert bounds == [*(str(bound) for bound in BUCKETS_US), "+Inf"]  # "10", not "10.0"


def test_buckets_are_cumulative(found: dict) -> None:
    labels = {"interface": "gRPC", "name": "add_one", "version": "1"}
    counts = [
        value(found, "ovms_request_time_us_bucket", le=str(bound), **labels) for bound in BUCKETS_US
    ]
    assert counts == sorted(counts)
    assert counts[-1] <= MODEL_OK
    assert value(found, "ovms_request_time_us_bucket", le="+Inf", **labels) == MODEL_OK


def test_unloading_a_version_zeroes_its_gauges_and_keeps_its_counts(
    server: InProcessServer, found: dict
) -> None:
    """The hooks a reload calls: counts survive an unload, and a version loaded again counts
    on from there."""
    metrics = server.metrics
    version = server.registry.models["add_one"].versions[1]
    server.on_loop(lambda: metrics.on_version_unloaded("add_one", 1))
    after = samples(server.exposition()[0].decode())
    labels = {"name": "add_one", "version": "1"}
    assert value(after, "ovms_streams", **labels) == 0
    assert value(after, "ovms_infer_req_queue_size", **labels) == 0
    ok = _requests(after, "success", "ModelInfer", "add_one", version="1")
    assert ok == _requests(found, "success", "ModelInfer", "add_one", version="1")

    server.on_loop(lambda: metrics.on_version_loaded("add_one", 1, version.compiled))
    with grpcclient.InferenceServerClient(server.url) as client:
        client.infer("add_one", [_input()])
    again = samples(server.exposition()[0].decode())
    assert value(again, "ovms_infer_req_queue_size", **labels) == NIREQ
    assert _requests(again, "success", "ModelInfer", "add_one", version="1") == ok + 1
