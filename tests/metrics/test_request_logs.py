"""Per-request log lines: at DEBUG, a line for every request (its outcome, and why it failed);
at INFO, none, however many requests fail (as OVMS: a client cannot flood the log)."""

from __future__ import annotations

import json
import re
from urllib.error import HTTPError
from urllib.request import urlopen

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from metrics_servers import write_config
from serving_process import ServerProcess, free_port
from tritonclient.utils import InferenceServerException


def _input(name: str = "input") -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, [1, 10], "FP32")
    given.set_data_from_numpy(np.ones((1, 10), np.float32))
    return given


def _rest_failure(rest_port: int) -> None:
    """add_two asked over REST for an input it does not have."""
    given = {"name": "wrong_name", "shape": [1, 10], "datatype": "FP32", "data": [1.0] * 10}
    body = json.dumps({"inputs": [given]}).encode()
    url = f"http://127.0.0.1:{rest_port}/v2/models/add_two/infer"
    with pytest.raises(HTTPError) as refused:
        urlopen(url, body, timeout=30)
    refused.value.close()  # the error holds the response and its socket
    assert refused.value.code == 400


def _requests(url: str, rest_port: int) -> None:
    _rest_failure(rest_port)
    with grpcclient.InferenceServerClient(url) as client:
        client.infer("add_one", [_input()])
        client.infer("add_two", [_input()])
        for call in (
            lambda: client.infer("no_such_model", [_input()]),
            lambda: client.infer("add_one", [_input("wrong_name")]),
            lambda: client.infer("add_one", [_input()], model_version="3"),
            lambda: client.get_model_metadata("no_such_model"),
            lambda: client.infer("echo", [_input("unexpected")]),
        ):
            with pytest.raises(InferenceServerException):
                call()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("logs")
    config = write_config(root)
    found = {}
    for level in ("DEBUG", "INFO"):
        rest_port = free_port()
        flags = ["--log_level", level, "--rest_port", str(rest_port)]
        server = ServerProcess(["--config_path", str(config), *flags], root)
        try:
            server.wait_ready()
            _requests(server.url, rest_port)
        finally:
            code = server.stop()
        assert code == 0, server.log()
        found[level] = server.log()
    return found


def _lines(log: str, text: str) -> list[str]:
    return [line for line in log.splitlines() if text in line]


def test_lookup_failures_at_debug(logs: dict[str, str]) -> None:
    lines = _lines(logs["DEBUG"], "Getting modelInstance or pipeline failed.")
    assert len(lines) == 3  # the unknown model (twice: infer, metadata) and the unknown version
    assert all("][serving][debug][" in line for line in lines)
    assert any("Model with requested name is not found" in line for line in lines)
    assert any("Model with requested version is not found" in line for line in lines)


def test_request_failures_at_debug(logs: dict[str, str]) -> None:
    (line,) = _lines(logs["DEBUG"], "[servable name: add_one version: default]")
    assert "][debug][" in line
    assert "gRPC ModelInfer request failed: Missing input with specific name" in line
    (graph,) = _lines(logs["DEBUG"], "[servable name: echo version: default]")
    assert "unexpected" in graph
    (rest,) = _lines(logs["DEBUG"], "[servable name: add_two version: default]")
    assert "REST ModelInfer request failed: Missing input with specific name" in rest


def test_successes_at_debug(logs: dict[str, str]) -> None:
    lines = _lines(logs["DEBUG"], "Total gRPC request processing time:")
    served = {re.search(r"servable: (\w+); version: (\w+)", line).groups() for line in lines}
    assert served == {("add_one", "1"), ("add_two", "1")}


def test_no_request_lines_at_info(logs: dict[str, str]) -> None:
    log = logs["INFO"]
    for text in ("Getting modelInstance", "servable name:", "request processing time"):
        assert not _lines(log, text), log
    assert "Started gRPC server" in log  # the log itself is there
