"""ovmsx's own gRPC transport (ovmsx/frontend/grpc_core.py) as clients see it: unknown methods,
deadlines passing mid-inference, cancelled streams, and a quick model answered the same way
whether it runs on the polling thread or is handed to OpenVINO's thread."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_process import ServerProcess, served
from tritonclient.utils import InferenceServerException

from ovmsx.call_timer import WARM_UP_CALLS

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
SLOW_ROWS = 2048  # rows of the slow model's input: an inference of about half a second
SERVICE = "/inference.GRPCInferenceService/"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("transport")
    sm.save(sm.slow(layers=32), root / "slow")
    sm.save(sm.add_constant([1, 10], 1.0), root / "add_one")
    models = [
        {"config": {"name": name, "base_path": str(root / name), "plugin_config": F32}}
        for name in ("slow", "add_one")
    ]
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": models}))
    with served(config, root) as process:
        yield process


def _add_one(client: grpcclient.InferenceServerClient, x: np.ndarray) -> np.ndarray:
    given = grpcclient.InferInput("input", list(x.shape), "FP32").set_data_from_numpy(x)
    return client.infer("add_one", [given]).as_numpy("output")


def _slow_input() -> grpcclient.InferInput:
    x = np.ones((SLOW_ROWS, 512), np.float32)
    return grpcclient.InferInput("input", list(x.shape), "FP32").set_data_from_numpy(x)


def test_an_unknown_method_is_unimplemented(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.url) as channel:
        call = channel.unary_unary(SERVICE + "NoSuchMethod")
        with pytest.raises(grpc.RpcError) as raised:
            call(b"", timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_a_quick_model_answers_alike_before_and_after_it_is_measured_quick(
    server: ServerProcess,
) -> None:
    """The first requests are handed to OpenVINO's thread (submitted, measured); later ones run
    on the polling thread. The answers do not depend on where."""
    with grpcclient.InferenceServerClient(server.url) as client:
        for n in range(4 * WARM_UP_CALLS):
            x = np.full((1, 10), n, np.float32)
            np.testing.assert_array_equal(_add_one(client, x), x + 1)


def test_a_deadline_passing_mid_inference_ends_the_call_and_the_server_serves_on(
    server: ServerProcess,
) -> None:
    with grpcclient.InferenceServerClient(server.url) as client:
        started = time.monotonic()
        with pytest.raises(InferenceServerException) as raised:
            client.infer("slow", [_slow_input()], client_timeout=0.05)
        assert raised.value.status() == "StatusCode.DEADLINE_EXCEEDED"
        assert time.monotonic() - started < 30  # the call ended; it did not wait for the model
        for _ in range(3):  # the slow model and the quick one both answer afterwards
            answer = client.infer("slow", [_slow_input()]).as_numpy("output")
            assert answer.shape == (SLOW_ROWS, 512)
            x = np.arange(10, dtype=np.float32).reshape(1, 10)
            np.testing.assert_array_equal(_add_one(client, x), x + 1)
    assert "Traceback" not in server.log()


def test_a_stream_the_client_cancels_ends_and_the_server_serves_on(server: ServerProcess) -> None:
    answers: list[object] = []
    client = grpcclient.InferenceServerClient(server.url)
    try:
        client.start_stream(callback=lambda result, error: answers.append(result or error))
        for _ in range(3):
            client.async_stream_infer("slow", [_slow_input()])
        client.stop_stream(cancel_requests=True)
    finally:
        client.close()
    with grpcclient.InferenceServerClient(server.url) as fresh:
        x = np.ones((1, 10), np.float32)
        np.testing.assert_array_equal(_add_one(fresh, x), x + 1)
    assert "Traceback" not in server.log()


@pytest.mark.parametrize("transport", ["core", "aio"])
def test_the_server_stops_with_a_stream_still_open(tmp_path: Path, transport: str) -> None:
    """SIGTERM with a client's stream open: the stream is in flight until the drain ends
    (OVMSX_DRAIN_SECONDS, 1 s here instead of 30), then it is cancelled and the server exits
    0, on either transport (ovmsx/frontend/grpc_transport.py)."""
    sm.save(sm.add_constant([1, 10], 1.0), tmp_path / "add_one")
    config = tmp_path / "config.json"
    entry = {"config": {"name": "add_one", "base_path": str(tmp_path / "add_one")}}
    config.write_text(json.dumps({"model_config_list": [entry]}))
    environment = {"OVMSX_GRPC_TRANSPORT": transport, "OVMSX_DRAIN_SECONDS": "1"}
    process = ServerProcess(["--config_path", str(config)], tmp_path, environment)
    client = None
    try:
        process.wait_ready()
        client = grpcclient.InferenceServerClient(process.url)
        answers: list[object] = []
        client.start_stream(callback=lambda result, error: answers.append(result or error))
        x = np.ones((1, 10), np.float32)
        given = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(x)
        client.async_stream_infer("add_one", [given])
        deadline = time.monotonic() + 30
        while not answers and time.monotonic() < deadline:
            time.sleep(0.01)
        assert answers, "no answer on the stream"
        code = process.stop()
    finally:
        if client is not None:
            client.close()
        process.kill()
    assert code == 0, process.log()
    if transport == "core":  # grpc.aio cancels without a word
        assert "cancelling calls still running after 1.0 s" in process.log()
