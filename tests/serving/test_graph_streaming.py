"""Graphs over ModelStreamInfer: one instance per stream, every output packet sent at once."""

from __future__ import annotations

import json

import numpy as np
from graph_streams import Stream, output_names, tensor_input, timestamp_of


def _int(name: str, *values: int):
    return [tensor_input(name, np.array(values, np.int32))]


def test_generator_streams_ten_tokens_then_end(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("generative", _int("start", 5), timestamp=1000)
        answers = [stream.result() for _ in range(11)]
    tokens = [a for a in answers if output_names(a) == ["token"]]
    assert [int(a.as_numpy("token")[0]) for a in tokens] == list(range(5, 15))
    assert [timestamp_of(a) for a in tokens] == list(range(1000, 1010))
    assert output_names(answers[-1]) == ["end"]
    assert timestamp_of(answers[-1]) == 1010


def test_two_generation_cycles_with_manual_timestamps(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("generative", _int("start", 0), timestamp=0)
        first = [stream.result() for _ in range(11)]
        stream.send("generative", _int("start", 100), timestamp=50)
        second = [stream.result() for _ in range(11)]
    assert int(first[0].as_numpy("token")[0]) == 0
    assert int(second[0].as_numpy("token")[0]) == 100
    assert [timestamp_of(a) for a in second] == list(range(50, 61))


def test_timestamps_ascend_and_a_step_back_is_refused(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        for stamp in (10, 20, 30):
            stream.send("increment", [tensor_input("first_number", np.zeros(1, np.float32))], stamp)
            assert timestamp_of(stream.result()) == stamp
        stream.send("increment", [tensor_input("first_number", np.zeros(1, np.float32))], 20)
        assert "Failed to add packet to mediapipe graph input stream" in stream.error()
        stream.send("increment", [tensor_input("first_number", np.ones(1, np.float32))], 40)
        result = stream.result()
    assert timestamp_of(result) == 40
    np.testing.assert_array_equal(result.as_numpy("last_number"), [4.0])


def test_automatic_timestamps_increase(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stamps = []
        for _ in range(5):
            stream.send("increment", [tensor_input("first_number", np.zeros(1, np.float32))])
            stamps.append(timestamp_of(stream.result()))
    assert stamps == sorted(set(stamps))


def test_two_outputs_arrive_as_two_responses(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("two_outputs", _int("input", 3), timestamp=7)
        answers = [stream.result(), stream.result()]
    by_name = {output_names(a)[0]: a for a in answers}
    assert set(by_name) == {"doubled", "negated"}
    assert {timestamp_of(a) for a in answers} == {7}
    np.testing.assert_array_equal(by_name["doubled"].as_numpy("doubled"), [6])
    np.testing.assert_array_equal(by_name["negated"].as_numpy("negated"), [-3])


def test_incomplete_outputs_send_only_what_the_node_returned(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("incomplete_outputs", _int("input", -1))
        failed = stream.result()
        stream.send("incomplete_outputs", _int("input", 4))
        passed = stream.result()
    assert output_names(failed) == ["error_message"]
    assert failed.as_numpy("error_message").tobytes() == b"negative"
    assert output_names(passed) == ["result"]
    np.testing.assert_array_equal(passed.as_numpy("result"), [8])


def test_incomplete_inputs_with_the_immediate_handler(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("immediate", _int("labels", 1, 2))
        only_labels = json.loads(stream.result().as_numpy("report").tobytes())
        stream.send("immediate", [tensor_input("image", np.zeros(4, np.float32))])
        only_image = json.loads(stream.result().as_numpy("report").tobytes())
    assert [t["name"] for t in only_labels["inputs"]] == ["labels"]
    assert [t["name"] for t in only_image["inputs"]] == ["image"]


def test_node_error_is_sent_at_once_and_a_new_stream_works(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("raises_later", _int("input", 1))
        stream.result()
        stream.send("raises_later", _int("input", -1))
        # No further request is sent: the error must come on its own.
        error = stream.error()
        assert "negative input" in error
        assert stream.nothing_more()
    with Stream(graph_server.url) as again:
        again.send("raises_later", _int("input", 2))
        np.testing.assert_array_equal(again.result().as_numpy("output"), [2])


def test_error_on_the_first_request(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("raises", _int("input", 1))
        assert "handler refused the input" in stream.error()


def test_bad_request_in_a_stream_is_answered_and_the_stream_goes_on(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("increment", _int("stranger", 1))
        error = stream.error()
        assert "stranger is unexpected; partial deserialization of first request" in error
        stream.send("increment", [tensor_input("first_number", np.zeros(1, np.float32))])
        np.testing.assert_array_equal(stream.result().as_numpy("last_number"), [3.0])
        stream.send("increment", _int("stranger", 1))
        assert "partial deserialization of subsequent requests" in stream.error()


def test_per_instance_state_is_private_to_each_stream(graph_server, graph_client) -> None:
    with Stream(graph_server.url) as first, Stream(graph_server.url) as second:
        counts: dict[str, list[int]] = {"first": [], "second": []}
        for stream, name, times in ((first, "first", 3), (second, "second", 2)):
            for _ in range(times):
                stream.send("counter", _int("input", 0))
                counts[name].append(int(stream.result().as_numpy("count")[0]))
    assert counts == {"first": [1, 2, 3], "second": [1, 2]}
    unary = graph_client.infer("counter", _int("input", 0))
    assert int(unary.as_numpy("count")[0]) == 1


def test_a_stream_to_another_graph_name_is_refused_per_request(graph_server) -> None:
    with Stream(graph_server.url) as stream:
        stream.send("increment", [tensor_input("first_number", np.zeros(1, np.float32))])
        stream.result()
        stream.send("counter", _int("input", 0))
        assert "different servable name" in stream.error()


def test_immediate_handler_gets_both_inputs_of_one_request(graph_client) -> None:
    inputs = [*_int("labels", 1), tensor_input("image", np.zeros(2, np.float32))]
    report = json.loads(graph_client.infer("immediate", inputs).as_numpy("report").tobytes())
    assert sorted(t["name"] for t in report["inputs"]) == ["image", "labels"]
