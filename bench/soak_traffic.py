"""The soak's requests: good and bad, over gRPC unary, gRPC streams and REST, each with the one
answer it must get.

A request kind is a function taking the calling thread's ``Clients`` and raising ``Unexpected``
when the answer differs from what ovmsx must answer (a good request's values, a bad request's
exact code). Anything else it raises (a dropped connection, a timeout) is unexpected too: the
soak counts both. Clients are those of other projects (grpcio with tritonclient's generated
messages, the standard library's ``http.client``), so the soak sees what a user's client sees.
"""

from __future__ import annotations

import http.client
import json
import queue
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
import numpy as np
from tritonclient.grpc import service_pb2

SERVICE = "/inference.GRPCInferenceService/"
TIMEOUT_S = 30.0
# A rejected request large enough that keeping it would show in the server's memory.
LARGE_ELEMENTS = 1 << 20


class Unexpected(Exception):
    """The server answered, but not what it must."""


@dataclass
class Clients:
    """One thread's connections: a gRPC channel and a keep-alive HTTP connection."""

    grpc_target: str
    rest_host: str
    rest_port: int
    rng: np.random.Generator = field(default_factory=np.random.default_rng)

    def __post_init__(self) -> None:
        self.channel = grpc.insecure_channel(
            self.grpc_target,
            options=[("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)],
        )
        self.infer = self.channel.unary_unary(SERVICE + "ModelInfer")
        self.stream = self.channel.stream_stream(SERVICE + "ModelStreamInfer")
        self.http = http.client.HTTPConnection(self.rest_host, self.rest_port, timeout=TIMEOUT_S)

    def post(self, path: str, body: bytes, headers: dict[str, str] | None = None):
        try:
            self.http.request("POST", path, body, headers or {"Content-Type": "application/json"})
            response = self.http.getresponse()
            return response.status, response.read()
        except (http.client.HTTPException, OSError):
            # A connection the server closed (as it may after an error) is reopened once.
            self.http.close()
            self.http.request("POST", path, body, headers or {"Content-Type": "application/json"})
            response = self.http.getresponse()
            return response.status, response.read()

    def close(self) -> None:
        self.channel.close()
        self.http.close()


def _fp32_request(model: str, name: str, values: np.ndarray, request_id: str = ""):
    request = service_pb2.ModelInferRequest(model_name=model, id=request_id)
    request.inputs.add(name=name, datatype="FP32", shape=list(values.shape))
    request.raw_input_contents.append(values.astype(np.float32).tobytes())
    return request


def _first_output(response) -> np.ndarray:
    return np.frombuffer(response.raw_output_contents[0], np.float32)


def _expect_code(call: Callable[[], object], code: grpc.StatusCode, text: str) -> None:
    try:
        call()
    except grpc.RpcError as error:
        if error.code() != code or text not in (error.details() or ""):
            got = f"{error.code()} {error.details()!r}"
            raise Unexpected(f"{got}, wanted {code} {text!r}") from None
        return
    raise Unexpected(f"succeeded, wanted {code}")


def _add_one_over_grpc(model: str, name: str) -> Callable[[Clients], None]:
    def kind(clients: Clients) -> None:
        values = clients.rng.random((1, 10), dtype=np.float32)
        message = _fp32_request(model, name, values).SerializeToString()
        response = service_pb2.ModelInferResponse.FromString(
            clients.infer(message, timeout=TIMEOUT_S)
        )
        if not np.allclose(_first_output(response), values.ravel() + 1):
            raise Unexpected(f"{model}: wrong values")

    return kind


def grpc_unknown_model(clients: Clients) -> None:
    message = _fp32_request("no_such_model", "INPUT", np.zeros((1, 10))).SerializeToString()
    _expect_code(
        lambda: clients.infer(message, timeout=TIMEOUT_S),
        grpc.StatusCode.NOT_FOUND,
        "Model with requested name is not found",
    )


def grpc_large_wrong_shape(clients: Clients) -> None:
    message = _fp32_request("add_one", "INPUT", np.zeros((1, LARGE_ELEMENTS))).SerializeToString()
    _expect_code(
        lambda: clients.infer(message, timeout=TIMEOUT_S),
        grpc.StatusCode.INVALID_ARGUMENT,
        "Invalid input shape",
    )


def grpc_garbage(clients: Clients) -> None:
    message = clients.rng.bytes(512)
    # Random bytes may happen to parse; the field number 0 in the first byte never does.
    message = b"\x00" + message
    _expect_code(
        lambda: clients.infer(message, timeout=TIMEOUT_S),
        grpc.StatusCode.INVALID_ARGUMENT,
        "",
    )


STREAM_GOOD = 3


def grpc_model_stream(clients: Clients) -> None:
    """One stream: good requests and a bad one; every answer arrives, the bad one with its id."""
    requests = [
        _fp32_request("add_one", "INPUT", clients.rng.random((1, 10), dtype=np.float32), f"g{i}")
        for i in range(STREAM_GOOD)
    ]
    requests.insert(1, _fp32_request("add_one", "WRONG", np.zeros((1, 10)), "bad"))
    answers = list(
        clients.stream(iter([r.SerializeToString() for r in requests]), timeout=TIMEOUT_S)
    )
    if len(answers) != len(requests):
        raise Unexpected(f"stream: {len(answers)} answers to {len(requests)} requests")
    for request, raw in zip(requests, answers, strict=True):
        answer = service_pb2.ModelStreamInferResponse.FromString(raw)
        if request.id == "bad":
            if not answer.error_message or answer.infer_response.id != "bad":
                raise Unexpected(f"stream: bad request answered {answer}")
            continue
        values = np.frombuffer(request.raw_input_contents[0], np.float32)
        if answer.error_message:
            raise Unexpected(f"stream: request {request.id} answered {answer.error_message!r}")
        if not np.allclose(_first_output(answer.infer_response), values + 1):
            raise Unexpected(f"stream: request {request.id}: wrong values")


TOKENS = 8


def grpc_graph_tokens(clients: Clients) -> None:
    """A streaming Python graph: one request, ``TOKENS`` answers on one stream."""
    request = service_pb2.ModelInferRequest(model_name="py_tokens")
    request.inputs.add(name="count", datatype="INT32", shape=[1])
    request.raw_input_contents.append(np.array([TOKENS], np.int32).tobytes())
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    outbox.put(request.SerializeToString())
    done = object()

    def requests():
        while (item := outbox.get()) is not done:
            yield item

    call = clients.stream(requests(), timeout=TIMEOUT_S)
    try:
        for _ in range(TOKENS):
            answer = service_pb2.ModelStreamInferResponse.FromString(next(call))
            if answer.error_message:
                raise Unexpected(f"py_tokens: {answer.error_message!r}")
    finally:
        outbox.put(done)
        call.cancel()


def _json_add_one(model: str, name: str) -> Callable[[Clients], None]:
    def kind(clients: Clients) -> None:
        values = np.round(clients.rng.random(10) * 100, 2)
        tensor = {"name": name, "shape": [1, 10], "datatype": "FP32", "data": list(values)}
        body = {"inputs": [tensor]}
        status, answer = clients.post(f"/v2/models/{model}/infer", json.dumps(body).encode())
        if status != 200:
            raise Unexpected(f"REST {model}: {status} {answer[:200]!r}")
        got = np.array(json.loads(answer)["outputs"][0]["data"], np.float32)
        if not np.allclose(got, values.astype(np.float32) + 1):
            raise Unexpected(f"REST {model}: wrong values")

    return kind


def rest_binary_add_one(clients: Clients) -> None:
    values = clients.rng.random(10, dtype=np.float32)
    raw = values.tobytes()
    header = json.dumps(
        {
            "inputs": [
                {
                    **{"name": "INPUT", "shape": [1, 10], "datatype": "FP32"},
                    "parameters": {"binary_data_size": len(raw)},
                }
            ],
            "parameters": {"binary_data_output": True},
        }
    ).encode()
    headers = {
        "Content-Type": "application/octet-stream",
        "Inference-Header-Content-Length": str(len(header)),
    }
    status, answer = clients.post("/v2/models/add_one/infer", header + raw, headers)
    if status != 200 or not np.allclose(np.frombuffer(answer[-len(raw) :], np.float32), values + 1):
        raise Unexpected(f"REST binary: {status} {answer[:200]!r}")


def _rest_error(path: str, body: bytes, status: int, text: str) -> Callable[[Clients], None]:
    def kind(clients: Clients) -> None:
        got, answer = clients.post(path, body)
        message = json.loads(answer).get("error", "") if got != 200 else ""
        if got != status or text not in message:
            raise Unexpected(f"REST {path}: {got} {answer[:200]!r}, wanted {status} {text!r}")

    return kind


def _wrong_shape_body() -> bytes:
    data = [0.0] * 12
    return json.dumps(
        {"inputs": [{"name": "INPUT", "shape": [1, 12], "datatype": "FP32", "data": data}]}
    ).encode()


KINDS: dict[str, Callable[[Clients], None]] = {
    "gRPC add_one": _add_one_over_grpc("add_one", "INPUT"),
    "gRPC churn (versions change)": _add_one_over_grpc("churn", "INPUT"),
    "gRPC Python graph (handler changes)": _add_one_over_grpc("py_add_one", "input"),
    "gRPC unknown model": grpc_unknown_model,
    "gRPC 4 MiB wrong shape": grpc_large_wrong_shape,
    "gRPC garbage body": grpc_garbage,
    "gRPC model stream, one bad request": grpc_model_stream,
    "gRPC graph stream, 8 answers": grpc_graph_tokens,
    "REST add_one JSON": _json_add_one("add_one", "INPUT"),
    "REST add_one binary": rest_binary_add_one,
    "REST Python graph": _json_add_one("py_add_one", "input"),
    "REST garbage JSON": _rest_error(
        "/v2/models/add_one/infer", b"{not json", 412, "The file is not valid json"
    ),
    "REST unknown model": _rest_error(
        "/v2/models/no_such_model/infer", _wrong_shape_body(), 404, "Model with requested name"
    ),
    "REST wrong shape": _rest_error(
        "/v2/models/add_one/infer", _wrong_shape_body(), 400, "Invalid input shape"
    ),
}
