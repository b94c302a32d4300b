"""The fallback gRPC transport on grpc.aio (ovmsx/frontend/grpc_aio.py), which serves when
grpcio's private layer is not one ovmsx's own transport was built for: the same answers,
statuses, streams and limits as the fast transport, seen by real clients (shutdown with a
stream open: test_grpc_transport.py, on both).

Here it is chosen with OVMSX_GRPC_TRANSPORT=aio; CI also starts the server on a grpcio release
outside the tested range and checks that it falls back on its own (.ci/compat).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from graph_streams import Stream, output_names, tensor_input
from serving_graphs import write_graphs
from serving_process import ServerProcess, served
from tritonclient.utils import InferenceServerException

from ovmsx.frontend.grpc_transport import CORE_TESTED, core_layer_problem

AIO = {"OVMSX_GRPC_TRANSPORT": "aio"}
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
SLOW_ROWS = 2048  # rows of the slow model's input: an inference of about half a second
QUOTA = 8 << 20
SERVICE = "/inference.GRPCInferenceService/"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("fallback")
    config = write_graphs(root)  # the graphs of serving_graphs.py, for streams
    sm.save(sm.slow(layers=32), root / "slow")
    sm.save(sm.add_constant([1, 10], 1.0), root / "add_one")
    sm.save(sm.add_constant([-1, -1], 1.0), root / "dynamic")
    settings = json.loads(config.read_text())
    settings["model_config_list"] = [
        {"config": {"name": name, "base_path": str(root / name), "plugin_config": F32}}
        for name in ("slow", "add_one", "dynamic")
    ]
    config.write_text(json.dumps(settings))
    quota = ["--grpc_memory_quota", str(QUOTA)]
    with served(config, root, quota, AIO) as process:
        yield process


@pytest.fixture
def client(server: ServerProcess) -> Iterator[grpcclient.InferenceServerClient]:
    with grpcclient.InferenceServerClient(server.url) as opened:
        yield opened


def _input(x: np.ndarray, name: str = "input") -> grpcclient.InferInput:
    return grpcclient.InferInput(name, list(x.shape), "FP32").set_data_from_numpy(x)


def test_the_log_says_which_transport_serves(server: ServerProcess) -> None:
    assert "gRPC is served on grpc.aio, as OVMSX_GRPC_TRANSPORT asks" in server.log()


def test_a_model_answers(client: grpcclient.InferenceServerClient) -> None:
    x = np.arange(10, dtype=np.float32).reshape(1, 10)
    for _ in range(5):  # before and after the model is measured quick
        np.testing.assert_array_equal(
            client.infer("add_one", [_input(x)]).as_numpy("output"), x + 1
        )


def test_a_graph_answers_on_a_stream(server: ServerProcess) -> None:
    with Stream(server.url) as stream:
        stream.send("generative", [tensor_input("start", np.array([5], np.int32))], 1000)
        answers = [stream.result() for _ in range(11)]
    tokens = [int(a.as_numpy("token")[0]) for a in answers if output_names(a) == ["token"]]
    assert tokens == list(range(5, 15))


def test_refusals_keep_their_codes_and_messages(client: grpcclient.InferenceServerClient) -> None:
    x = np.ones((1, 10), np.float32)
    with pytest.raises(InferenceServerException) as missing:
        client.infer("no_such_model", [_input(x)])
    assert missing.value.status() == "StatusCode.NOT_FOUND"
    assert missing.value.message() == "Model with requested name is not found - name: no_such_model"
    with pytest.raises(InferenceServerException) as shape:
        client.infer("add_one", [_input(np.ones((1, 5), np.float32))])
    assert shape.value.status() == "StatusCode.INVALID_ARGUMENT"
    assert shape.value.message().startswith("Invalid input shape - Expected: (1,10); Actual: (1,5)")


def test_an_unknown_method_is_unimplemented(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.url) as channel, pytest.raises(grpc.RpcError) as raised:
        channel.unary_unary(SERVICE + "NoSuchMethod")(b"", timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_a_request_over_the_memory_quota_is_resource_exhausted(
    client: grpcclient.InferenceServerClient,
) -> None:
    x = np.ones((1, (QUOTA // 4) + 1024), np.float32)
    with pytest.raises(InferenceServerException) as refused:
        client.infer("dynamic", [_input(x)])
    assert refused.value.status() == "StatusCode.RESOURCE_EXHAUSTED"
    assert "(--grpc_memory_quota)" in refused.value.message()
    small = np.ones((1, 4), np.float32)
    np.testing.assert_array_equal(client.infer("dynamic", [_input(small)]).as_numpy("output"), 2)


def test_a_deadline_passing_mid_inference_ends_the_call(
    server: ServerProcess, client: grpcclient.InferenceServerClient
) -> None:
    slow = _input(np.ones((SLOW_ROWS, 512), np.float32))
    with pytest.raises(InferenceServerException) as late:
        client.infer("slow", [slow], client_timeout=0.05)
    assert late.value.status() == "StatusCode.DEADLINE_EXCEEDED"
    x = np.ones((1, 10), np.float32)
    np.testing.assert_array_equal(client.infer("add_one", [_input(x)]).as_numpy("output"), x + 1)


def test_a_cancelled_stream_ends_and_the_server_serves_on(server: ServerProcess) -> None:
    client = grpcclient.InferenceServerClient(server.url)
    try:
        client.start_stream(callback=lambda result, error: None)
        for _ in range(3):
            client.async_stream_infer("slow", [_input(np.ones((SLOW_ROWS, 512), np.float32))])
        client.stop_stream(cancel_requests=True)
    finally:
        client.close()
    with grpcclient.InferenceServerClient(server.url) as fresh:
        x = np.ones((1, 10), np.float32)
        np.testing.assert_array_equal(fresh.infer("add_one", [_input(x)]).as_numpy("output"), x + 1)
    assert "Traceback" not in server.log()


def test_health_is_served(server: ServerProcess) -> None:
    # The standard health service's Check, by its raw messages: service "" -> SERVING (1).
    with grpc.insecure_channel(server.url) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        assert check(b"", timeout=10) == b"\x08\x01"


@pytest.mark.parametrize(
    ("version", "fast"),
    [("1.66.2", False), (f"{CORE_TESTED[0][0]}.{CORE_TESTED[0][1]}.1", True),
     (f"{CORE_TESTED[1][0]}.{CORE_TESTED[1][1]}.0", True),
     (f"{CORE_TESTED[1][0]}.{CORE_TESTED[1][1] + 1}.0", False), ("2.0.0", False),
     ("1.90.0rc1", False), ("dev", False)],
)  # fmt: skip
def test_only_the_tested_grpcio_releases_get_the_fast_transport(version: str, fast: bool) -> None:
    problem = core_layer_problem(version)
    if fast:
        assert problem is None
    else:
        assert problem is not None
        assert problem.startswith(f"grpcio {version} is not a release its fast transport")
