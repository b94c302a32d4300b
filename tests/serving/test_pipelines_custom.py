"""Pipelines with custom nodes (built-in ones and test nodes compiled here), via tritonclient."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_pipelines import custom_node, fp32_input, model_node, pipeline, write_config
from serving_process import served
from tritonclient.utils import InferenceServerException

import ovmsx.custom_nodes
from ovmsx.call_timer import WARM_UP_CALLS

REQ = "request"
NODES = Path(__file__).parent / "nodes"
EXAMPLE_NODE = Path(__file__).parents[2] / "examples" / "custom_node_scale" / "scale.c"
# Extra compiler flags for the test nodes built here: .ci/sanitize sets them so that the nodes
# run under AddressSanitizer and UndefinedBehaviorSanitizer like the rest of the native code.
SANITIZE_FLAGS = shlex.split(os.environ.get("OVMSX_TEST_NODE_CFLAGS", ""))


def compile_node(source: Path, folder: Path) -> Path:
    """Build a test node with the system compiler against the installed ABI header."""
    target = folder / f"lib{source.stem}.so"
    include = ovmsx.custom_nodes.include_dir()
    command = ["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-I{include}", *SANITIZE_FLAGS]
    subprocess.run([*command, str(source), "-o", str(target)], check=True)
    return target


def _rank3_identity(root: Path) -> dict:
    x = ops.parameter([-1, -1, -1], ov.Type.f32, name="input")
    y = ops.add(x, ops.constant(np.float32(0)))
    y.output(0).set_names({"output"})
    sm.save(ov.Model([y], [x], "collect"), root / "collect")
    return {"config": {"name": "collect", "base_path": str(root / "collect")}}


PIPELINES = [
    pipeline(
        "model_then_node",
        ["numbers"],
        [
            model_node("model", "add_one", {"input": (REQ, "numbers")}, {"output": "m"}),
            custom_node(
                "node",
                "add_one",
                {"input_numbers": ("model", "m")},
                {"output_numbers": "n"},
                params={"add_number": "5", "sub_number": "2"},
            ),
        ],
        {"result": ("node", "n")},
    ),
    pipeline(
        "fan_out",
        ["numbers"],
        [
            custom_node(
                "fan",
                "demultiply",
                {"input_numbers": (REQ, "numbers")},
                {"copies": "copy"},
                demultiply_count=-1,
            ),
            model_node("ten", "plus_ten", {"input": ("fan", "copy")}, {"output": "t"}),
            model_node(
                "gather",
                "collect",
                {"input": ("ten", "t")},
                {"output": "g"},
                gather_from_node="fan",
            ),
        ],
        {"gathered": ("gather", "g")},
    ),
    pipeline(
        "scaled",
        ["values"],
        [
            custom_node(
                "scale",
                "scale",
                {"values": (REQ, "values")},
                {"scaled": "s"},
                params={"factor": "3"},
            )
        ],
        {"scaled": ("scale", "s")},
    ),
    pipeline(
        "shout",
        ["text"],
        [custom_node("up", "echo_strings", {"text": (REQ, "text")}, {"echo_string": "loud"})],
        {"result": ("up", "loud")},
    ),
]


# Two demultiplexers open (the request's rows, then "fan"); gathering the outer one first
# breaks last-in first-out order.
LIFO_BROKEN = pipeline(
    "gather_out_of_order",
    ["numbers"],
    [
        custom_node(
            "fan",
            "demultiply",
            {"input_numbers": (REQ, "numbers")},
            {"copies": "c"},
            demultiply_count=-1,
        ),
        model_node(
            "gather",
            "plus_ten",
            {"input": ("fan", "c")},
            {"output": "g"},
            gather_from_node="request",
        ),
    ],
    {"result": ("gather", "g")},
    demultiply_count=-1,
)


@pytest.fixture(scope="module")
def client(tmp_path_factory) -> Iterator[grpcclient.InferenceServerClient]:
    root = tmp_path_factory.mktemp("custom_pipelines")
    libraries = [
        {"name": "add_one", "base_path": str(ovmsx.custom_nodes.built_in("add_one"))},
        {"name": "demultiply", "base_path": str(compile_node(NODES / "demultiply.c", root))},
        {"name": "echo_strings", "base_path": str(compile_node(NODES / "echo_strings.c", root))},
        # The documented example, built with the documented command.
        {"name": "scale", "base_path": str(compile_node(EXAMPLE_NODE, root))},
    ]
    config = write_config(root, [*PIPELINES, LIFO_BROKEN], libraries, [_rank3_identity(root)])
    with served(config, root) as server, grpcclient.InferenceServerClient(server.url) as triton:
        yield triton


def test_model_then_custom_node_equals_the_steps_by_hand(client) -> None:
    x = np.random.default_rng(3).standard_normal((1, 10)).astype(np.float32)
    result = client.infer("model_then_node", [fp32_input("numbers", x)])
    model_step = client.infer("add_one", [fp32_input("input", x)]).as_numpy("output")
    np.testing.assert_allclose(result.as_numpy("result"), model_step + 5 - 2, rtol=1e-6)


def test_a_chain_of_quick_nodes_answers_alike_wherever_it_runs(client) -> None:
    """The first requests run on the event loop, the model handed to OpenVINO's thread and
    the node measured; once both are quick the chain runs blocking on gRPC's polling thread.
    The answers do not depend on where."""
    rng = np.random.default_rng(5)
    for _ in range(4 * WARM_UP_CALLS):
        x = rng.standard_normal((1, 10)).astype(np.float32)
        result = client.infer("model_then_node", [fp32_input("numbers", x)])
        np.testing.assert_allclose(result.as_numpy("result"), x + 1 + 5 - 2, rtol=1e-6)


@pytest.mark.parametrize("shards", [1, 7])
def test_dynamic_demultiplexer_and_gather(client, shards) -> None:
    x = np.array([[shards, 1.5, -2.0]], np.float32)
    gathered = client.infer("fan_out", [fp32_input("numbers", x)]).as_numpy("gathered")
    assert gathered.shape == (shards, 1, 3)
    expected = np.stack([x + i + 10 for i in range(shards)])
    np.testing.assert_array_equal(gathered, expected)


def test_demultiplexer_with_no_shards_aborts(client) -> None:
    x = np.array([[0, 1.0, 2.0]], np.float32)
    with pytest.raises(InferenceServerException) as caught:
        client.infer("fan_out", [fp32_input("numbers", x)])
    assert "StatusCode.ABORTED" in str(caught.value)
    assert "Pipeline execution aborted due to no content from custom node" in str(caught.value)


def test_strings_reach_custom_nodes_padded_and_come_back_as_strings(client) -> None:
    words = np.array([b"quiet", b"a", b"calm words"], dtype=np.object_)
    given = grpcclient.InferInput("text", [3], "BYTES")
    given.set_data_from_numpy(words)
    result = client.infer("shout", [given])
    assert result.as_numpy("result").tolist() == [b"QUIET", b"A", b"CALM WORDS"]


def test_pipeline_metadata_has_custom_node_dims(client) -> None:
    metadata = client.get_model_metadata("fan_out")
    assert [(t.name, t.datatype, list(t.shape)) for t in metadata.inputs] == [
        ("numbers", "FP32", [1, -1])
    ]
    assert [list(t.shape) for t in metadata.outputs] == [[-1, -1, -1]]


def test_the_documented_example_node_builds_and_runs(client) -> None:
    x = np.arange(6, dtype=np.float32).reshape(1, 6)
    result = client.infer("scaled", [fp32_input("values", x)])
    np.testing.assert_array_equal(result.as_numpy("scaled"), x * 3)


def test_gathers_must_close_the_innermost_demultiplexer_first(client) -> None:
    assert not client.is_model_ready("gather_out_of_order")
    with pytest.raises(InferenceServerException) as caught:
        client.infer("gather_out_of_order", [fp32_input("numbers", np.ones((2, 1, 3), np.float32))])
    text = str(caught.value)
    assert "Demultiplexer and gather nodes are not in LIFO order" in text
    assert "innermost open demultiplexer is fan" in text
