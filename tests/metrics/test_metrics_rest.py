"""``GET /metrics`` on the REST port of the real ``ovmsx`` command: requests over REST and gRPC
counted apart, families chosen by the flags or the config, 400 when metrics are off (with a hint
naming --metrics_enable)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.client import HTTPConnection
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from metrics_servers import samples, value, write_config
from serving_process import ServerProcess, free_port

HOST = "127.0.0.1"
ONES = {"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32", "data": [1] * 10}]}
WRONG = {"inputs": [{"name": "wrong", "shape": [1, 10], "datatype": "FP32", "data": [1] * 10}]}


class Reply(NamedTuple):
    status: int
    content_type: str
    body: bytes


def _http(port: int, method: str, path: str, document: dict | None = None) -> Reply:
    connection = HTTPConnection(HOST, port, timeout=30)
    try:
        body = None if document is None else json.dumps(document)
        connection.request(method, path, body=body)
        response = connection.getresponse()
        return Reply(response.status, response.getheader("Content-Type", ""), response.read())
    finally:
        connection.close()


class RestServer(NamedTuple):
    process: ServerProcess
    rest_port: int


def _serve(config: Path, root: Path, *flags: str) -> RestServer:
    port = free_port()
    args = ["--config_path", str(config), "--rest_port", str(port)]
    process = ServerProcess([*args, "--rest_bind_address", HOST, *flags], root)
    try:
        process.wait_ready()
    except BaseException:
        process.kill()
        raise
    return RestServer(process, port)


def _stop(server: RestServer) -> str:
    code = server.process.stop()
    assert code == 0, server.process.log()
    return server.process.log()


def _scrape(server: RestServer) -> dict:
    reply = _http(server.rest_port, "GET", "/metrics")
    assert reply.status == 200, reply
    assert reply.content_type == "text/plain; version=0.0.4; charset=utf-8"
    return samples(reply.body.decode())


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The exposition after known requests: over REST, 3 add_one successes, 2 failures, an
    add_two and an echo success, metadata and ready; over gRPC, 2 add_one successes."""
    root = tmp_path_factory.mktemp("rest_metrics")
    server = _serve(write_config(root), root, "--metrics_enable")
    try:
        port = server.rest_port
        for _ in range(3):
            assert _http(port, "POST", "/v2/models/add_one/infer", ONES).status == 200
        for _ in range(2):
            assert _http(port, "POST", "/v2/models/add_one/infer", WRONG).status == 400
        assert _http(port, "POST", "/v2/models/add_two/infer", ONES).status == 200
        assert _http(port, "POST", "/v2/models/echo/infer", ONES).status == 200
        assert _http(port, "POST", "/v2/models/echo/infer", WRONG).status == 400
        assert _http(port, "GET", "/v2/models/add_one").status == 200
        assert _http(port, "GET", "/v2/models/add_one/versions/1/ready").status == 200
        assert _http(port, "GET", "/v2/models/echo/ready").status == 200
        assert _http(port, "POST", "/v2/models/nothing/infer", ONES).status == 404
        with grpcclient.InferenceServerClient(server.process.url) as client:
            given = grpcclient.InferInput("input", [1, 10], "FP32")
            given.set_data_from_numpy(np.ones((1, 10), np.float32))
            for _ in range(2):
                client.infer("add_one", [given])
        yield _scrape(server)
    finally:
        _stop(server)


def _requests(found: dict, outcome: str, interface: str, method: str, name: str, **labels):
    labels = {"api": "KServe", "interface": interface, "method": method, "name": name, **labels}
    return value(found, f"ovms_requests_{outcome}_total", **labels)


def test_rest_and_grpc_are_counted_apart(counted: dict) -> None:
    # add_one: 3 direct REST successes and the 2 calls add_two made over REST.
    assert _requests(counted, "success", "REST", "ModelInfer", "add_one", version="1") == 3 + 2
    assert _requests(counted, "fail", "REST", "ModelInfer", "add_one", version="1") == 2
    assert _requests(counted, "success", "gRPC", "ModelInfer", "add_one", version="1") == 2
    assert _requests(counted, "fail", "gRPC", "ModelInfer", "add_one", version="1") == 0
    rest = {"interface": "REST", "name": "add_one", "version": "1"}
    assert value(counted, "ovms_request_time_us_count", **rest) == 3
    assert value(counted, "ovms_request_time_us_count", **{**rest, "interface": "gRPC"}) == 2


def test_rest_pipeline_graph_metadata_and_ready(counted: dict) -> None:
    assert _requests(counted, "success", "REST", "ModelInfer", "add_two", version="1") == 1
    assert _requests(counted, "success", "REST", "ModelMetadata", "add_one", version="1") == 1
    assert _requests(counted, "success", "REST", "ModelReady", "add_one") == 1
    assert _requests(counted, "success", "REST", "ModelReady", "echo") == 1
    graph = {"api": "KServe", "interface": "REST", "method": "ModelInfer", "name": "echo"}
    assert value(counted, "ovms_requests_accepted_total", **graph) == 1
    assert value(counted, "ovms_requests_rejected_total", **graph) == 1
    assert value(counted, "ovms_responses_total", **graph) == 1
    # REST's ModelInfer shares the graph's ModelInfer processing-time series with gRPC's.
    processing = value(
        counted, "ovms_graph_processing_time_us_count", method="ModelInfer", name="echo"
    )
    assert processing == 1


def test_the_default_families(counted: dict) -> None:
    names = {sample.removesuffix("_total") for sample, _ in counted}
    families = {name.rsplit("_", 1)[0] if name.endswith(("_count", "_sum", "_bucket")) else name
                for name in names}  # fmt: skip
    assert "ovms_infer_req_queue_size" not in families
    assert "ovms_infer_req_active" not in families
    assert {"ovms_streams", "ovms_current_requests", "ovms_current_graphs"} <= families


def test_config_section_chooses_the_families(tmp_path: Path) -> None:
    monitoring = {
        "metrics": {
            "enable": True,
            "metrics_list": ["ovms_requests_fail", "ovms_infer_req_queue_size"],
        }
    }
    server = _serve(write_config(tmp_path, monitoring), tmp_path)
    try:
        found = _scrape(server)
    finally:
        log = _stop(server)
    names = {sample for sample, _ in found}
    assert names == {"ovms_requests_fail_total", "ovms_infer_req_queue_size"}
    assert value(found, "ovms_infer_req_queue_size", name="add_one", version="1") >= 1
    assert "[modelmanager][info]" in next(
        line for line in log.splitlines() if "Metrics enabled." in line
    )
    assert "DISABLED ovms_current_graphs" in log


def test_metrics_off_is_an_unknown_url_that_names_metrics_enable(tmp_path: Path) -> None:
    server = _serve(write_config(tmp_path), tmp_path)
    try:
        reply = _http(server.rest_port, "GET", "/metrics")
    finally:
        log = _stop(server)
    assert reply.status == 400
    assert json.loads(reply.body) == {
        "error": "Invalid request URL - metrics are off: start ovmsx with --metrics_enable "
        "(or the config's monitoring section)"
    }
    assert reply.content_type.startswith("text/plain")
    assert "Metrics enabled." not in log
