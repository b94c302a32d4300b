"""DAG pipelines of models over KServe, with tritonclient: answers, metadata, config errors."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from serving_pipelines import fp32_input, model_node, pipeline, write_config
from serving_process import served
from tritonclient.utils import InferenceServerException

REQ = "request"

GOOD = [
    # input -> add_one -> plus_ten -> output: the steps by hand are +1 then +10.
    pipeline(
        "chain",
        ["numbers"],
        [
            model_node("one", "add_one", {"input": (REQ, "numbers")}, {"output": "plus_one"}),
            model_node("ten", "plus_ten", {"input": ("one", "plus_one")}, {"output": "done"}),
        ],
        {"result": ("ten", "done")},
    ),
    # Two independent branches from one input.
    pipeline(
        "branches",
        ["numbers"],
        [
            model_node("a", "add_one", {"input": (REQ, "numbers")}, {"output": "a_out"}),
            model_node("b", "plus_ten", {"input": (REQ, "numbers")}, {"output": "b_out"}),
        ],
        {"plus_one": ("a", "a_out"), "plus_ten": ("b", "b_out")},
    ),
    # Demultiplex the request's first dimension; each shard runs add_one; the response stacks.
    pipeline(
        "per_row",
        ["rows"],
        [model_node("one", "add_one", {"input": (REQ, "rows")}, {"output": "row"})],
        {"rows_plus_one": ("one", "row")},
        demultiply_count=-1,
    ),
]

# Pipelines that must not load: name -> (config, status message, words of the details).
BROKEN = {
    "missing_node": (
        pipeline(
            "missing_node",
            ["numbers"],
            [model_node("one", "add_one", {"input": ("ghost", "x")}, {"output": "o"})],
            {"result": ("one", "o")},
        ),
        "Pipeline definition has reference to missing node",
        ["ghost"],
    ),
    "missing_model": (
        pipeline(
            "missing_model",
            ["numbers"],
            [model_node("one", "no_such_model", {"input": (REQ, "numbers")}, {"output": "o"})],
            {"result": ("one", "o")},
        ),
        "Pipeline definition has reference to missing model",
        ["no_such_model"],
    ),
    "missing_input": (
        pipeline(
            "missing_input",
            ["numbers"],
            [model_node("one", "add_one", {"nope": (REQ, "numbers")}, {"output": "o"})],
            {"result": ("one", "o")},
        ),
        "Pipeline definition has connection to non existing model input",
        ["nope"],
    ),
    "missing_output": (
        pipeline(
            "missing_output",
            ["numbers"],
            [model_node("one", "add_one", {"input": (REQ, "numbers")}, {"nope": "o"})],
            {"result": ("one", "o")},
        ),
        "Pipeline definition has reference to missing model output",
        ["nope"],
    ),
    "missing_data_source": (
        pipeline(
            "missing_data_source",
            ["numbers"],
            [model_node("one", "add_one", {"input": (REQ, "other")}, {"output": "o"})],
            {"result": ("one", "o")},
        ),
        "Pipeline definition has reference to missing data source",
        ["other"],
    ),
    "cycle": (
        pipeline(
            "cycle",
            ["numbers"],
            [
                model_node("a", "plus_ten", {"input": ("b", "b_out")}, {"output": "a_out"}),
                model_node("b", "plus_ten", {"input": ("a", "a_out")}, {"output": "b_out"}),
            ],
            {"result": ("b", "b_out")},
        ),
        "Pipeline definition contains a cycle",
        ["a -> b", "b"],
    ),
    "shape_mismatch": (
        pipeline(
            "shape_mismatch",
            ["numbers"],
            [
                model_node("one", "add_one", {"input": (REQ, "numbers")}, {"output": "o"}),
                model_node("five", "five_wide", {"input": ("one", "o")}, {"output": "p"}),
            ],
            {"result": ("five", "p")},
        ),
        "Invalid input shape",
        ["five", "[1, 5]", "[1, 10]"],
    ),
    "precision_mismatch": (
        pipeline(
            "precision_mismatch",
            ["numbers"],
            [
                model_node("one", "add_one", {"input": (REQ, "numbers")}, {"output": "o"}),
                model_node("ints", "ints", {"input": ("one", "o")}, {"output": "p"}),
            ],
            {"result": ("ints", "p")},
        ),
        "Invalid input precision",
        ["ints", "INT32", "FP32"],
    ),
    "gather_order": (
        pipeline(
            "gather_order",
            ["numbers"],
            [
                model_node("one", "add_one", {"input": (REQ, "numbers")}, {"output": "o"}),
                model_node(
                    "g",
                    "plus_ten",
                    {"input": ("one", "o")},
                    {"output": "p"},
                    gather_from_node="one",
                ),
            ],
            {"result": ("g", "p")},
        ),
        "Gather node refers to node that isn't demultiplexer",
        ["one"],
    ),
    "unknown_library": (
        pipeline(
            "unknown_library",
            ["numbers"],
            [
                {
                    "name": "c",
                    "type": "custom",
                    "library_name": "no_such_library",
                    "inputs": [{"input_numbers": {"node_name": REQ, "data_item": "numbers"}}],
                    "outputs": [{"data_item": "output_numbers", "alias": "o"}],
                }
            ],
            {"result": ("c", "o")},
        ),
        "Pipeline refers to incorrect library",
        ["no_such_library"],
    ),
}


@pytest.fixture(scope="module")
def pipeline_client(tmp_path_factory) -> Iterator[grpcclient.InferenceServerClient]:
    root = tmp_path_factory.mktemp("pipelines")
    config = write_config(root, [*GOOD, *(c for c, _, _ in BROKEN.values())])
    with served(config, root) as server, grpcclient.InferenceServerClient(server.url) as client:
        yield client


def test_chain_equals_the_steps_by_hand(pipeline_client) -> None:
    x = np.random.default_rng(1).standard_normal((1, 10)).astype(np.float32)
    result = pipeline_client.infer("chain", [fp32_input("numbers", x)])
    by_hand_one = pipeline_client.infer("add_one", [fp32_input("input", x)]).as_numpy("output")
    by_hand = pipeline_client.infer("plus_ten", [fp32_input("input", by_hand_one)]).as_numpy(
        "output"
    )
    np.testing.assert_array_equal(result.as_numpy("result"), by_hand)
    assert result.get_response().model_name == "chain"


def test_independent_branches(pipeline_client) -> None:
    x = np.arange(10, dtype=np.float32).reshape(1, 10)
    result = pipeline_client.infer("branches", [fp32_input("numbers", x)])
    np.testing.assert_array_equal(result.as_numpy("plus_one"), x + 1)
    np.testing.assert_array_equal(result.as_numpy("plus_ten"), x + 10)


@pytest.mark.parametrize("rows", [1, 7])
def test_demultiplexed_rows_are_gathered_back(pipeline_client, rows) -> None:
    x = np.arange(rows * 10, dtype=np.float32).reshape(rows, 1, 10)
    result = pipeline_client.infer("per_row", [fp32_input("rows", x)])
    np.testing.assert_array_equal(result.as_numpy("rows_plus_one"), x + 1)


def test_zero_rows_abort_the_pipeline(pipeline_client) -> None:
    x = np.zeros((0, 1, 10), np.float32)
    with pytest.raises(InferenceServerException) as caught:
        pipeline_client.infer("per_row", [fp32_input("rows", x)])
    assert "Pipeline execution aborted due to no content" in str(caught.value)
    assert "StatusCode.ABORTED" in str(caught.value)


def test_request_is_validated_against_the_first_node(pipeline_client) -> None:
    with pytest.raises(InferenceServerException, match="Invalid input shape"):
        pipeline_client.infer("chain", [fp32_input("numbers", np.zeros((1, 9), np.float32))])
    with pytest.raises(InferenceServerException, match="Missing input with specific name"):
        pipeline_client.infer("chain", [fp32_input("other", np.zeros((1, 10), np.float32))])


def test_metadata_comes_from_the_nodes(pipeline_client) -> None:
    metadata = pipeline_client.get_model_metadata("chain")
    assert metadata.versions == ["1"]
    assert [(t.name, t.datatype, list(t.shape)) for t in metadata.inputs] == [
        ("numbers", "FP32", [1, 10])
    ]
    # The output is plus_ten's, a model with dynamic dimensions.
    assert [(t.name, t.datatype, list(t.shape)) for t in metadata.outputs] == [
        ("result", "FP32", [-1, -1])
    ]
    # Two consumers of one input: what satisfies both.
    branches = pipeline_client.get_model_metadata("branches")
    assert [list(t.shape) for t in branches.inputs] == [[1, 10]]
    per_row = pipeline_client.get_model_metadata("per_row")
    assert [list(t.shape) for t in per_row.inputs] == [[-1, 1, 10]]
    assert pipeline_client.is_model_ready("chain")


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_config_errors_name_the_problem(pipeline_client, name) -> None:
    _, message, words = BROKEN[name]
    assert not pipeline_client.is_model_ready(name)
    with pytest.raises(InferenceServerException) as caught:
        pipeline_client.infer(name, [fp32_input("numbers", np.zeros((1, 10), np.float32))])
    text = str(caught.value)
    assert "Pipeline is not loaded yet" in text
    assert message in text
    for word in words:
        assert word in text


def test_requested_outputs_pick_from_the_pipeline_outputs(pipeline_client) -> None:
    x = np.zeros((1, 10), np.float32)
    wanted = [grpcclient.InferRequestedOutput("plus_ten")]
    result = pipeline_client.infer("branches", [fp32_input("numbers", x)], outputs=wanted)
    assert [o.name for o in result.get_response().outputs] == ["plus_ten"]
    unknown = [grpcclient.InferRequestedOutput("nope")]
    with pytest.raises(InferenceServerException, match="Missing output with specific name"):
        pipeline_client.infer("branches", [fp32_input("numbers", x)], outputs=unknown)
