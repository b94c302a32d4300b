"""User calculators written in Python (``PythonCalculator``), served by a real server: options,
one instance per graph run, load errors with their reasons, failures at run time."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from graph_streams import tensor_input
from kserve_requests import assert_status, rpc_error
from serving_graphs_tags import (
    BROKEN_CALCULATOR_GRAPHS,
    CALCULATOR_GRAPHS,
    calculator_graphs,
    write_graphs,
)
from serving_process import ServerProcess, served

NOT_LOADED = "Mediapipe is not loaded yet"
EXECUTION = "Mediapipe execution failed. MP status"
PRECONDITION = "Mediapipe graph precondition failed"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    config = write_graphs(tmp_path_factory.mktemp("calculator_graphs"), calculator_graphs())
    with served(config, tmp_path_factory.mktemp("calculator_srv")) as process:
        yield process


def _one(value: float) -> list[grpcclient.InferInput]:
    return [tensor_input("in", np.array([value], np.float32))]


def test_graphs_sharing_one_module_file_all_load(client) -> None:
    # Every good graph lists ../calculators.py: it is imported once, its names registered once.
    assert all(client.is_model_ready(graph) for graph in CALCULATOR_GRAPHS)


def test_calculator_gets_its_node_name_and_options(client) -> None:
    report = json.loads(client.infer("options", _one(1)).as_numpy("report").tobytes())
    assert report["node"] == "inspect_options"
    assert report["options"] == {"colour": "blue", "size": "3"}


def test_each_request_runs_a_fresh_instance(client) -> None:
    for _ in range(3):
        report = json.loads(client.infer("options", _one(1)).as_numpy("report").tobytes())
        assert (report["opened"], report["calls"]) == (1, 1)


def test_check_node_may_accept_a_node(client) -> None:
    np.testing.assert_array_equal(client.infer("picky_upper", _one(4)).as_numpy("out"), [4])


@pytest.mark.parametrize("graph", sorted(BROKEN_CALCULATOR_GRAPHS))
def test_broken_calculator_graph_is_unavailable_with_its_reason(client, graph) -> None:
    _, _, words = BROKEN_CALCULATOR_GRAPHS[graph]
    assert not client.is_model_ready(graph)
    got = rpc_error(client.infer, graph, _one(1))
    assert_status(got, grpc.StatusCode.UNAVAILABLE, NOT_LOADED, f"{graph}: ")
    for word in words:
        assert word in got[1]


def test_exception_in_process_fails_the_request_naming_the_node(client) -> None:
    got = rpc_error(client.infer, "fails", _one(-1))
    details = 'INTERNAL: Calculator::Process() for node "fails" failed: ValueError: negative input'
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, EXECUTION, details + " on purpose")


def test_failed_precondition_from_a_calculator(client) -> None:
    got = rpc_error(client.infer, "fails", _one(0))
    details = 'FAILED_PRECONDITION: Calculator::Process() for node "fails" failed: zero is refused'
    assert_status(got, grpc.StatusCode.UNKNOWN, PRECONDITION, details)


def test_exception_in_open_fails_the_request(client) -> None:
    got = rpc_error(client.infer, "open_fails", _one(1))
    details = (
        'INTERNAL: Calculator::Open() for node "opener" failed: RuntimeError: cannot open on '
        "purpose"
    )
    assert_status(got, grpc.StatusCode.INVALID_ARGUMENT, EXECUTION, details)


def test_server_keeps_serving_after_calculator_failures(client) -> None:
    for _ in range(2):
        rpc_error(client.infer, "fails", _one(-1))
        rpc_error(client.infer, "open_fails", _one(1))
        np.testing.assert_array_equal(client.infer("fails", _one(7)).as_numpy("out"), [7])
    assert client.is_model_ready("fails")
