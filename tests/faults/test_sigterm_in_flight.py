"""SIGTERM while requests are in flight over unary gRPC (a slow model, its pipeline, a graph
whose Python node sleeps), a gRPC stream and REST: every one of them is answered OK with the
right numbers, a request sent after the signal is refused, and the process exits with 0.
(tests/serving/test_stop_under_load.py stops busy servers many times over and checks the
exit; this checks the answers.)"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import fault_world as fw
import numpy as np
import tritonclient.grpc as grpcclient
from graph_streams import Stream
from rest_process import RestProcess, send
from serving_process import wait_until
from tritonclient.utils import InferenceServerException

UNARY = ("slow", "slow_pipeline", "sleepy", "slow")
# Long enough that all six requests are in flight together even on a loaded machine (parallel
# test workers): the graph's node sleeps this long, and the slow model takes 2 x SLOW_ROWS
# (its three calls run one after another on its one infer request).
SLEEP_SECONDS = 3.0
ROWS = 2 * fw.SLOW_ROWS


def test_in_flight_requests_finish_after_sigterm(tmp_path: Path) -> None:
    config = fw.build(tmp_path, SLEEP_SECONDS)
    server = RestProcess(["--config_path", str(config), "--metrics_enable"], tmp_path)
    url = f"127.0.0.1:{server.port}"
    data = fw.rows(ROWS, 2.0)
    answers: dict[str, np.ndarray | str] = {}
    lock = threading.Lock()

    def keep(key: str, value) -> None:
        with lock:
            answers[key] = value

    def unary(index: int, name: str) -> None:
        given, produced = fw.SLOW_SERVABLES[name]
        try:
            with grpcclient.InferenceServerClient(url) as client:
                result = client.infer(name, [fw.tensor(given, data)], client_timeout=60)
            keep(f"grpc {index} {name}", result.as_numpy(produced))
        except InferenceServerException as error:
            keep(f"grpc {index} {name}", str(error))

    def stream() -> None:
        with Stream(url) as opened:
            opened.send("sleepy", [fw.tensor("input", data)])
            result, error = opened.next(timeout=60)
        keep("stream sleepy", str(error) if error else result.as_numpy("output"))

    def rest() -> None:
        document = {"inputs": [{"name": "input", "shape": list(data.shape), "datatype": "FP32",
                                "data": data.ravel().tolist()}]}  # fmt: skip
        reply = send(server.rest_port, "POST", "/v2/models/sleepy/infer", json.dumps(document))
        if reply.status == 200:
            output = reply.json()["outputs"][0]
            keep("rest sleepy", np.array(output["data"], np.float32).reshape(output["shape"]))
        else:
            keep("rest sleepy", reply.body.decode())

    try:
        server.wait_ready()
        # The graph's three requests first (they sleep SLEEP_SECONDS), then the model's three
        # calls while those sleep: the two groups do not race each other to be in flight.
        graph_clients = [threading.Thread(target=unary, args=(2, "sleepy"))]
        graph_clients += [threading.Thread(target=stream), threading.Thread(target=rest)]
        model_clients = [
            threading.Thread(target=unary, args=(i, n))
            for i, n in enumerate(UNARY)
            if n != "sleepy"
        ]
        clients = graph_clients + model_clients

        def graph_requests() -> tuple[float, float]:
            text = send(server.rest_port, "GET", "/metrics").body.decode()
            arrived = fw.metric(text, "ovms_requests_accepted", name="sleepy")
            return arrived, fw.metric(text, "ovms_current_graphs", name="sleepy")

        def graphs_in_flight() -> bool:
            arrived, running = graph_requests()
            return arrived >= 3 and running >= 1

        def all_in_flight() -> bool:
            text = send(server.rest_port, "GET", "/metrics").body.decode()
            # The three calls of the slow model (two requests, one from the pipeline) have
            # arrived: running or waiting for its one infer request, or done, and it is still
            # at work; the graph's requests are still sleeping. (A request the signal beats is
            # refused, by design.)
            models = fw.metric(text, "ovms_current_requests", name="slow")
            model_calls = models + sum(
                fw.metric(text, family, name="slow", method="ModelInfer")
                for family in ("ovms_requests_success", "ovms_requests_fail")
            )
            graphs = fw.metric(text, "ovms_current_graphs", name="sleepy")
            return model_calls >= 3 and models >= 1 and graphs >= 1

        for client in graph_clients:
            client.start()
        wait_until(graphs_in_flight, "the graph's requests in flight", log=server.log)
        for client in model_clients:
            client.start()
        wait_until(all_in_flight, "every request in flight", log=server.log)
        server.process.send_signal(signal.SIGTERM)
        for client in clients:
            client.join(60)
        code = server.process.wait(60)
        refused = None
        try:
            with grpcclient.InferenceServerClient(url) as late:
                late.infer("slow", [fw.tensor("input", fw.rows(1))], client_timeout=5)
        except InferenceServerException as error:
            refused = error.status()
    finally:
        server.kill()
    log = server.log()
    assert code == 0, log
    assert len(answers) == len(UNARY) + 2, answers
    for key, got in answers.items():
        assert isinstance(got, np.ndarray), f"{key}: {got}\n{log}"
        expected = data + 1 if "sleepy" in key else data
        np.testing.assert_array_equal(got, expected, err_msg=key)
    assert refused == "StatusCode.UNAVAILABLE", refused
