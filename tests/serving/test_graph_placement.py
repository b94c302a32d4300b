"""Where a unary graph runs: a graph of quick Python nodes moves onto the gRPC server's polling
thread (answered there, no thread hop), a slow call moves it back to the workers, a node that
blocks never leaves them, and each move is logged.

The handler reports the name of the thread that ran it: the polling thread is ``ovmsx-grpc``,
graph workers are ``ovmsx-graph-*``. Whatever the placement, the answers are the same.
"""

from __future__ import annotations

import json
import urllib.request

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from graph_streams import tensor_input
from kserve_requests import rpc_error
from serving_graphs import graph_text, python_node
from serving_process import free_port, served

from ovmsx.call_timer import WARM_UP_CALLS

POLLING_THREAD = "ovmsx-grpc"

HANDLER = """
import threading
import time
import numpy as np
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs):
        value = int(np.array(inputs[0])[0])
        if value < 0:
            time.sleep(-value / 1000)  # a call that turns slow
        name = threading.current_thread().name.encode()
        twice = np.array([2 * value], np.int32)
        return [Tensor("thread", np.frombuffer(name, np.uint8)), Tensor("twice", twice)]
"""


# The same answers, and a wrong one for some values: once quick, the node runs on the polling
# thread from a request the C++ core read, and its failures must read as they did on a worker.
STRICT_HANDLER = """
import threading
import numpy as np
from pyovms import Tensor

class OvmsPythonModel:
    def execute(self, inputs):
        value = int(np.array(inputs[0])[0])
        name = Tensor("thread", np.frombuffer(threading.current_thread().name.encode(), np.uint8))
        twice = Tensor("twice", np.array([2 * value], np.int32))
        if value == 13:
            raise ValueError("thirteen is refused")
        if value == 14:
            return [name, twice, twice]  # one output twice
        if value == 15:
            return [twice]  # an output missing
        if value == 16:
            return [name, "twice"]  # not a Tensor
        if value == 17:
            return [name, Tensor("thrice", np.array([3], np.int32))]  # not an output
        return [name, twice]
"""
WRONG_VALUES = (13, 14, 15, 16, 17)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("placement")
    folder = root / "where"
    folder.mkdir()
    (folder / "where.py").write_text(HANDLER)
    (folder / "graph.pbtxt").write_text(
        graph_text(
            ["OVMS_PY_TENSOR:value"],
            ["OVMS_PY_TENSOR_A:thread", "OVMS_PY_TENSOR_B:twice"],
            [python_node("where", "where.py", ["IN:value"], ["THREAD:thread", "TWICE:twice"])],
        )
    )
    # The same handler under another name, for calls that block from the first one on.
    sleeper = root / "sleeper"
    sleeper.mkdir()
    (sleeper / "where.py").write_text(HANDLER)
    (sleeper / "graph.pbtxt").write_text(
        (folder / "graph.pbtxt").read_text().replace('name: "where"', 'name: "sleeper"')
    )
    strict = root / "strict"
    strict.mkdir()
    (strict / "strict.py").write_text(STRICT_HANDLER)
    (strict / "graph.pbtxt").write_text(
        graph_text(
            ["OVMS_PY_TENSOR:value"],
            ["OVMS_PY_TENSOR_A:thread", "OVMS_PY_TENSOR_B:twice"],
            [python_node("strict", "strict.py", ["IN:value"], ["THREAD:thread", "TWICE:twice"])],
        )
    )
    config = root / "config.json"
    graphs = [{"name": "where"}, {"name": "sleeper"}, {"name": "strict"}]
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": graphs}))
    rest_port = free_port()
    with served(config, root, ["--rest_port", str(rest_port), "--metrics_enable"]) as server:
        server.rest_port = rest_port
        yield server


def _call(
    client: grpcclient.InferenceServerClient, value: int, graph: str = "where"
) -> tuple[str, int]:
    result = client.infer(graph, [tensor_input("value", np.array([value], np.int32))])
    return result.as_numpy("thread").tobytes().decode(), int(result.as_numpy("twice")[0])


def test_a_quick_node_moves_to_the_loop_and_a_slow_call_sends_it_back(server) -> None:
    with grpcclient.InferenceServerClient(server.url) as client:
        # After its warm-up on workers, a call it makes there fast enough (on a busy machine
        # that may take a few more calls) brings it to the polling thread.
        seen = []
        while len(seen) < 50 * WARM_UP_CALLS and (not seen or seen[-1][0] != POLLING_THREAD):
            seen.append(_call(client, len(seen)))
        assert [twice for _, twice in seen] == [2 * n for n in range(len(seen))]
        threads = [thread for thread, _ in seen]
        assert all(t.startswith("ovmsx-graph") for t in threads[:WARM_UP_CALLS])
        assert threads[-1] == POLLING_THREAD
        # One slow call (on the polling thread, measured there) ...
        assert _call(client, -300) == (POLLING_THREAD, -600)
        # ... and the next ones run on workers again, with the same answers.
        after = [_call(client, n) for n in range(3)]
        assert [twice for _, twice in after] == [0, 2, 4]
        assert all(thread.startswith("ovmsx-graph") for thread, _ in after)

    # Both changes are in the log, with what caused them.
    log = server.log()
    assert "node where runs inline now: " in log
    assert "node where moves to a worker: a call took " in log


def test_a_node_that_blocks_from_its_first_call_never_runs_on_the_polling_thread(server) -> None:
    with grpcclient.InferenceServerClient(server.url) as client:
        seen = [_call(client, -2, "sleeper") for _ in range(3 * WARM_UP_CALLS)]
    assert [twice for _, twice in seen] == [-4] * (3 * WARM_UP_CALLS)
    assert all(thread.startswith("ovmsx-graph") for thread, _ in seen)
    assert "node sleeper runs inline" not in server.log()


def _graph_counts(server, graph: str) -> dict[str, float]:
    """The graph's ModelInfer-over-gRPC counters (accepted, responses, errors) from /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.rest_port}/metrics") as reply:
        text = reply.read().decode()
    wanted = ("ovms_requests_accepted", "ovms_responses", "ovms_graph_error")
    counts = dict.fromkeys(wanted, 0.0)
    for line in text.splitlines():
        family = line.split("{", 1)[0].removesuffix("_total")
        if family in wanted and f'name="{graph}"' in line and 'interface="gRPC"' in line:
            counts[family] += float(line.rsplit(" ", 1)[1])
    return counts


def _moved(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: after[name] - before[name] for name in before}


def _failure(client: grpcclient.InferenceServerClient, value: int) -> tuple:
    return rpc_error(client.infer, "strict", [tensor_input("value", np.array([value], np.int32))])


def test_on_the_polling_thread_answers_and_failures_are_those_of_the_workers(server) -> None:
    with grpcclient.InferenceServerClient(server.url) as client:
        # Each wrong answer, first from a worker (every call of the warm-up runs there).
        before = _graph_counts(server, "strict")
        on_workers = {value: _failure(client, value) for value in WRONG_VALUES}
        counted_on_workers = _moved(before, _graph_counts(server, "strict"))
        seen = []
        while len(seen) < 50 * WARM_UP_CALLS and (not seen or seen[-1][0] != POLLING_THREAD):
            seen.append(_call(client, len(seen), "strict"))
        assert seen[-1] == (POLLING_THREAD, 2 * (len(seen) - 1))
        # Plain requests (raw inputs, no parameters) now take the core's reading; the same
        # request with a parameter takes the general decoding. Both answer alike.
        given = np.array([21], np.int32)
        plain = client.infer("strict", [tensor_input("value", given)], request_id="plain")
        stamped = client.infer(
            "strict", [tensor_input("value", given)], request_id="stamped",
            parameters={"OVMS_MP_TIMESTAMP": 1234},
        )  # fmt: skip
        for result in (plain, stamped):
            assert result.as_numpy("thread").tobytes().decode() == POLLING_THREAD
            assert result.as_numpy("twice").tolist() == [42]
        first, second = plain.get_response(), stamped.get_response()
        assert (first.model_name, first.model_version, first.id) == ("strict", "1", "plain")
        assert [(o.name, o.datatype, list(o.shape)) for o in first.outputs] == [
            (o.name, o.datatype, list(o.shape)) for o in second.outputs
        ]
        assert second.parameters["OVMS_MP_TIMESTAMP"].int64_param == 1234
        assert first.parameters["OVMS_MP_TIMESTAMP"].int64_param > 1234
        # Each wrong answer again, now on the polling thread: the same status and words, and
        # the same counts in the graph's metrics.
        before = _graph_counts(server, "strict")
        inline = {value: _failure(client, value) for value in WRONG_VALUES}
        counted_inline = _moved(before, _graph_counts(server, "strict"))
        assert _call(client, 1, "strict") == (POLLING_THREAD, 2)  # still there
    assert inline == on_workers
    assert counted_inline == counted_on_workers
    # Each wrong answer was accepted (its packets reached the node) and failed there.
    assert counted_inline["ovms_requests_accepted"] == len(WRONG_VALUES)
    assert counted_inline["ovms_graph_error"] == len(WRONG_VALUES)
    assert counted_inline["ovms_responses"] == 0
    assert "thirteen is refused" in on_workers[13][1]
    assert "a second packet on stream twice" in on_workers[14][1]
    assert "no packet on output stream thread" in on_workers[15][1]
    assert "Expected: Tensor. Received: str" in on_workers[16][1]
    assert "Tensor name: thrice is not a valid node output" in on_workers[17][1]
