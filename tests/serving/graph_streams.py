"""A tritonclient stream whose answers can be awaited one by one in a test."""

from __future__ import annotations

import queue

import numpy as np
import tritonclient.grpc as grpcclient

ANSWER_TIMEOUT = 20.0


def tensor_input(name: str, data: np.ndarray) -> grpcclient.InferInput:
    datatype = {np.dtype(np.float32): "FP32", np.dtype(np.int32): "INT32"}[data.dtype]
    given = grpcclient.InferInput(name, list(data.shape), datatype)
    given.set_data_from_numpy(data)
    return given


class Stream:
    """``start_stream`` on its own client; ``next()`` returns (result, error) in arrival order."""

    def __init__(self, url: str) -> None:
        self.client = grpcclient.InferenceServerClient(url)
        self._answers: queue.Queue = queue.Queue()
        self.client.start_stream(callback=lambda result, error: self._answers.put((result, error)))

    def send(self, graph: str, inputs: list, timestamp: int | None = None) -> None:
        parameters = None if timestamp is None else {"OVMS_MP_TIMESTAMP": timestamp}
        self.client.async_stream_infer(graph, inputs, parameters=parameters)

    def next(self, timeout: float = ANSWER_TIMEOUT):
        return self._answers.get(timeout=timeout)

    def result(self, timeout: float = ANSWER_TIMEOUT):
        result, error = self.next(timeout)
        assert error is None, f"expected an answer, got {error}"
        return result

    def error(self, timeout: float = ANSWER_TIMEOUT) -> str:
        result, error = self.next(timeout)
        assert error is not None, f"expected an error, got {result.get_response()}"
        return str(error)

    def nothing_more(self, wait: float = 0.5) -> bool:
        try:
            self._answers.get(timeout=wait)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        self.client.stop_stream()
        self.client.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def timestamp_of(result) -> int:
    return result.get_response().parameters["OVMS_MP_TIMESTAMP"].int64_param


def output_names(result) -> list[str]:
    return [o.name for o in result.get_response().outputs]
