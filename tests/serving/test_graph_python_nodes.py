"""Python nodes over unary ModelInfer: the behaviours the OVMS Python-node docs describe."""

from __future__ import annotations

import json

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from graph_streams import tensor_input
from kserve_requests import request, rpc_error
from tritonclient.utils import InferenceServerException


def _raw_input(name: str, raw: bytes, shape: list[int], datatype: str) -> grpcclient.InferInput:
    given = grpcclient.InferInput(name, shape, datatype)
    given._raw_content = raw
    return given


def _report(result, name: str = "report") -> dict:
    return json.loads(result.as_numpy(name).tobytes())


def test_increment_chain_adds_three(graph_client) -> None:
    data = np.array([1.0, 2.0, 3.0], np.float32)
    result = graph_client.infer("increment", [tensor_input("first_number", data)])
    np.testing.assert_array_equal(result.as_numpy("last_number"), data + 3)
    response = result.get_response()
    assert response.model_name == "increment"
    assert response.model_version == "1"
    assert response.parameters["OVMS_MP_TIMESTAMP"].int64_param > 0


def test_inputs_arrive_sorted_by_tag(graph_client) -> None:
    inputs = [tensor_input(n, np.array([i], np.int32)) for i, n in enumerate(["c", "a", "b"])]
    report = _report(graph_client.infer("tag_order", inputs))
    assert [t["name"] for t in report["inputs"]] == ["a", "b", "c"]


def test_initialize_gets_node_and_stream_names(graph_client) -> None:
    report = _report(graph_client.infer("tag_order", _abc()))
    kwargs = report["kwargs"]
    assert kwargs["node_name"] == "abc"
    assert kwargs["input_names"] == ["b", "a", "c"]
    assert kwargs["output_names"] == ["report"]
    assert kwargs["base_path"].endswith("tag_order")


def _abc() -> list[grpcclient.InferInput]:
    return [tensor_input(n, np.array([1], np.int32)) for n in "abc"]


def test_known_datatype_keeps_its_format(graph_client) -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    (seen,) = _report(graph_client.infer("describe", [tensor_input("input", data)]))["inputs"]
    assert (seen["datatype"], seen["shape"], seen["format"]) == ("FP32", [2, 3], "f")
    assert seen["buffer_shape"] == [2, 3]
    assert bytes.fromhex(seen["hex"]) == data.tobytes()


def test_custom_datatype_is_one_dimensional_bytes(graph_client) -> None:
    raw = b"null0terminated0string0"
    given = _raw_input("input", raw, [3], "my_string")
    (seen,) = _report(graph_client.infer("describe", [given]))["inputs"]
    assert (seen["datatype"], seen["shape"]) == ("my_string", [3])
    assert (seen["format"], seen["buffer_shape"]) == ("B", [23])
    assert bytes.fromhex(seen["hex"]) == raw


def test_raw_bytes_reach_the_node_unchanged(graph_client) -> None:
    raw = b"\x89PNG not really an image"
    given = _raw_input("input", raw, [len(raw)], "BYTES")
    (seen,) = _report(graph_client.infer("describe", [given]))["inputs"]
    assert bytes.fromhex(seen["hex"]) == raw
    assert seen["shape"] == [len(raw)]


def test_bytes_contents_are_packed_with_length_prefixes(graph_stub) -> None:
    elements = [b"x" * 240, b"", b"abc"]
    message = request("describe")
    message.inputs.add(name="input", datatype="BYTES", shape=[3])
    message.inputs[0].contents.bytes_contents.extend(elements)
    response = graph_stub.ModelInfer(message)
    seen = json.loads(response.raw_output_contents[0])["inputs"][0]
    expected = b"".join(len(e).to_bytes(4, "little") + e for e in elements)
    assert bytes.fromhex(seen["hex"]) == expected
    assert (seen["datatype"], seen["shape"], seen["format"]) == ("BYTES", [3], "B")


def test_typed_custom_datatype_is_refused(graph_stub) -> None:
    message = request("describe")
    message.inputs.add(name="input", datatype="my_string", shape=[1])
    message.inputs[0].contents.bytes_contents.append(b"x")
    code, text = rpc_error(graph_stub.ModelInfer, message)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "custom datatypes are allowed only when raw_input_contents is used" in text


def test_python_outputs_keep_their_datatype_and_shape(graph_client) -> None:
    data = np.array([[1, 2]], np.int32)
    result = graph_client.infer("two_outputs", [tensor_input("input", data)])
    np.testing.assert_array_equal(result.as_numpy("doubled"), data * 2)
    np.testing.assert_array_equal(result.as_numpy("negated"), -data)
    outputs = {o.name: (o.datatype, list(o.shape)) for o in result.get_response().outputs}
    assert outputs == {"doubled": ("INT32", [1, 2]), "negated": ("INT32", [1, 2])}


def test_manual_timestamp_comes_back(graph_client) -> None:
    result = graph_client.infer(
        "increment",
        [tensor_input("first_number", np.zeros(1, np.float32))],
        parameters={"OVMS_MP_TIMESTAMP": 12345},
    )
    assert result.get_response().parameters["OVMS_MP_TIMESTAMP"].int64_param == 12345


def test_timestamp_must_be_int64(graph_client) -> None:
    with pytest.raises(InferenceServerException, match="Should be int64"):
        graph_client.infer(
            "increment",
            [tensor_input("first_number", np.zeros(1, np.float32))],
            parameters={"OVMS_MP_TIMESTAMP": "soon"},
        )


def test_reserved_side_packet_name_is_refused(graph_client) -> None:
    with pytest.raises(InferenceServerException, match="py is special reserved name"):
        graph_client.infer(
            "increment",
            [tensor_input("first_number", np.zeros(1, np.float32))],
            parameters={"py": "mine"},
        )


def test_missing_and_unexpected_inputs(graph_client) -> None:
    with pytest.raises(InferenceServerException, match="Not all input packets created"):
        graph_client.infer("tag_order", _abc()[:2])
    with pytest.raises(InferenceServerException, match="stranger is unexpected"):
        graph_client.infer("increment", [tensor_input("stranger", np.zeros(1, np.float32))])


def test_wrong_raw_size_for_a_known_datatype(graph_client) -> None:
    given = _raw_input("input", b"\x00" * 7, [2], "FP32")
    with pytest.raises(InferenceServerException, match="Invalid content size"):
        graph_client.infer("describe", [given])


def test_incomplete_outputs_fail_a_unary_call(graph_client) -> None:
    # Unary answers need a packet on every output; the node sent only error_message.
    with pytest.raises(InferenceServerException, match="no packet on output stream result"):
        graph_client.infer("incomplete_outputs", [tensor_input("input", np.array([-1], np.int32))])


@pytest.mark.parametrize(
    ("graph", "words"),
    [
        ("raises", ["ValueError", "handler refused the input"]),
        ("returns_none", ["Expected: list or generator", "NoneType"]),
        ("returns_tuple", ["Expected: list or generator", "tuple"]),
        ("returns_ints", ["Expected: Tensor", "int"]),
        ("returns_unknown_name", ["Tensor name: nobody is not a valid node output"]),
        ("yields_without_loopback", ["LOOPBACK is not defined in the node"]),
    ],
)
def test_node_errors_name_the_node_and_the_cause(graph_client, graph, words) -> None:
    with pytest.raises(InferenceServerException) as caught:
        graph_client.infer(graph, [tensor_input("input", np.array([1], np.int32))])
    text = str(caught.value)
    assert "Mediapipe execution failed. MP status" in text
    assert "Error occurred during graph execution" in text or graph.startswith(("returns", "y"))
    assert 'node "node"' in text
    for word in words:
        assert word in text
    # The graph still answers afterwards (each unary call has its own instance).
    with pytest.raises(InferenceServerException, match="MP status"):
        graph_client.infer(graph, [tensor_input("input", np.array([1], np.int32))])


def test_initialize_may_be_missing(graph_client) -> None:
    data = np.array([7], np.int32)
    result = graph_client.infer("no_initialize", [tensor_input("input", data)])
    np.testing.assert_array_equal(result.as_numpy("output"), data)


def test_same_file_name_in_two_folders_loads_both(graph_client) -> None:
    data = np.array([1, 2], np.int32)
    result = graph_client.infer("same_file_names", [tensor_input("input", data)])
    np.testing.assert_array_equal(result.as_numpy("output"), (data + 1) * 10)


def test_unary_generator_answers_with_its_first_item(graph_client) -> None:
    result = graph_client.infer("generative", [tensor_input("start", np.array([5], np.int32))])
    np.testing.assert_array_equal(result.as_numpy("token"), [5])
    np.testing.assert_array_equal(result.as_numpy("end"), [1])


def test_graph_ready_and_metadata(graph_client) -> None:
    assert graph_client.is_server_ready()
    assert graph_client.is_model_ready("increment")
    assert graph_client.is_model_ready("increment", "1")
    metadata = graph_client.get_model_metadata("tag_order")
    assert metadata.versions == ["1"]
    assert [t.name for t in metadata.inputs] == ["b", "a", "c"]
    assert {t.datatype for t in metadata.inputs} == {"INVALID"}
    assert [list(t.shape) for t in metadata.outputs] == [[]]
    with pytest.raises(InferenceServerException, match="Model with requested version"):
        graph_client.get_model_metadata("increment", "2")
