"""Pipeline details OVMS's own tests check, on a real server through tritonclient: declared
inputs nobody reads, ``demultiply_count`` 0 (the old spelling of -1), static counts in metadata,
and two dynamic demultiplexers without a gather between them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from details_servables import compile_demultiplier, fp32, save_add_one
from serving_pipelines import custom_node, model_node, pipeline
from serving_process import ServerProcess, served
from tritonclient.utils import InferenceServerException

REQ = "request"
DEPRECATED = "demultiply_count 0 will be deprecated. For dynamic count use -1."


def _fan_then_add_one(pipeline_name: str, fan: str, count: int, **extra) -> dict:
    """numbers [1,10] -> fan (K copies, K = numbers[0]) -> add_one per copy -> result."""
    return pipeline(
        pipeline_name,
        ["numbers"],
        [
            custom_node(
                fan, "demultiply", {"input_numbers": (REQ, "numbers")}, {"copies": "copy"},
                demultiply_count=count,
            ),
            model_node("one", "add_one", {"input": (fan, "copy")}, {"output": "plus_one"}),
        ],
        {"result": ("one", "plus_one")},
        **extra,
    )  # fmt: skip


def _rows_add_one(pipeline_name: str, count: int) -> dict:
    """rows [R,1,10], demultiplexed at entry -> add_one per row -> rows_plus_one."""
    return pipeline(
        pipeline_name,
        ["rows"],
        [model_node("one", "add_one", {"input": (REQ, "rows")}, {"output": "plus_one"})],
        {"rows_plus_one": ("one", "plus_one")},
        demultiply_count=count,
    )


PIPELINES = [
    # "unused" is declared and read by nobody.
    pipeline(
        "unread_input",
        ["numbers", "unused"],
        [model_node("one", "add_one", {"input": (REQ, "numbers")}, {"output": "plus_one"})],
        {"result": ("one", "plus_one")},
    ),
    _rows_add_one("entry_zero", 0),
    _fan_then_add_one("node_zero", "zero_fan", 0),
    _rows_add_one("entry_four", 4),
    _fan_then_add_one("node_four", "fan", 4),
    # The request's rows, then fan's copies of each: two dynamic levels open at once.
    _fan_then_add_one("dynamic_in_dynamic", "fan", -1, demultiply_count=-1),
    # The same with a static count at entry: one dynamic demultiplexer, served.
    _fan_then_add_one("static_around_dynamic", "fan", -1, demultiply_count=2),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("pipeline_declarations")
    library = compile_demultiplier(root)
    config = {
        "model_config_list": [
            {"config": {"name": "add_one", "base_path": str(save_add_one(root / "add_one"))}}
        ],
        "custom_node_library_config_list": [{"name": "demultiply", "base_path": str(library)}],
        "pipeline_config_list": PIPELINES,
    }
    path = root / "config.json"
    path.write_text(json.dumps(config, indent=1))
    with served(path, root) as process:
        yield process


@pytest.fixture(scope="module")
def client(server: ServerProcess) -> Iterator[grpcclient.InferenceServerClient]:
    with grpcclient.InferenceServerClient(server.url) as triton:
        yield triton


def _shapes(ports) -> dict[str, list[int]]:
    return {port.name: list(port.shape) for port in ports}


def _refused(client: grpcclient.InferenceServerClient, name: str, inputs: list) -> str:
    with pytest.raises(InferenceServerException) as caught:
        client.infer(name, inputs)
    return str(caught.value)


def _numbers(first: float) -> np.ndarray:
    numbers = np.arange(10, dtype=np.float32).reshape(1, 10) / 4
    numbers[0, 0] = first
    return numbers


# -- declared inputs that no node reads --------------------------------------------------------


def test_an_input_nobody_reads_is_not_in_metadata(client) -> None:
    metadata = client.get_model_metadata("unread_input")
    assert _shapes(metadata.inputs) == {"numbers": [1, 10]}
    assert _shapes(metadata.outputs) == {"result": [1, 10]}


def test_an_input_nobody_reads_is_not_asked_for(client) -> None:
    x = _numbers(0.5)
    result = client.infer("unread_input", [fp32("numbers", x)])
    np.testing.assert_array_equal(result.as_numpy("result"), x + 1)


def test_sending_the_unread_input_anyway_is_one_input_too_many(client) -> None:
    # The pipeline takes one input; OVMS counts the request's inputs first.
    x = _numbers(0.5)
    text = _refused(client, "unread_input", [fp32("numbers", x), fp32("unused", x)])
    assert "StatusCode.INVALID_ARGUMENT" in text
    assert "Invalid number of inputs - Expected: 1; Actual: 2" in text


# -- demultiply_count 0 ------------------------------------------------------------------------


def test_pipeline_level_zero_demultiplies_dynamically(client) -> None:
    assert client.is_model_ready("entry_zero")
    metadata = client.get_model_metadata("entry_zero")
    assert _shapes(metadata.inputs) == {"rows": [-1, 1, 10]}
    assert _shapes(metadata.outputs) == {"rows_plus_one": [-1, 1, 10]}
    for count in (1, 3):
        rows = np.random.default_rng(count).standard_normal((count, 1, 10)).astype(np.float32)
        result = client.infer("entry_zero", [fp32("rows", rows)])
        np.testing.assert_allclose(result.as_numpy("rows_plus_one"), rows + 1, rtol=1e-6)


def test_node_level_zero_demultiplies_dynamically(client) -> None:
    assert _shapes(client.get_model_metadata("node_zero").outputs) == {"result": [-1, 1, 10]}
    for copies in (1, 5):
        x = _numbers(copies)
        result = client.infer("node_zero", [fp32("numbers", x)]).as_numpy("result")
        assert result.shape == (copies, 1, 10)
        np.testing.assert_allclose(result, np.stack([x + i + 1 for i in range(copies)]))


def test_zero_is_accepted_with_ovms_deprecation_warning(server: ServerProcess) -> None:
    log = server.log()
    assert f"Pipeline entry_zero: {DEPRECATED}" in log
    assert f"Pipeline node zero_fan: {DEPRECATED}" in log
    assert f"Pipeline entry_four: {DEPRECATED}" not in log


# -- a static demultiply_count in metadata -----------------------------------------------------


def test_static_count_at_entry_is_the_gathered_dimension(client) -> None:
    metadata = client.get_model_metadata("entry_four")
    assert _shapes(metadata.inputs) == {"rows": [4, 1, 10]}
    assert _shapes(metadata.outputs) == {"rows_plus_one": [4, 1, 10]}
    rows = np.random.default_rng(4).standard_normal((4, 1, 10)).astype(np.float32)
    result = client.infer("entry_four", [fp32("rows", rows)]).as_numpy("rows_plus_one")
    np.testing.assert_allclose(result, rows + 1, rtol=1e-6)


def test_static_count_on_a_node_is_the_gathered_dimension(client) -> None:
    assert _shapes(client.get_model_metadata("node_four").outputs) == {"result": [4, 1, 10]}
    x = _numbers(4)
    result = client.infer("node_four", [fp32("numbers", x)]).as_numpy("result")
    np.testing.assert_allclose(result, np.stack([x + i + 1 for i in range(4)]))


def test_static_count_refuses_another_number_of_shards(client) -> None:
    text = _refused(client, "node_four", [fp32("numbers", _numbers(3))])
    assert "Wrong dimension size. Should match demultiply count" in text
    assert "Expected: 4; Actual: 3" in text


# -- dynamic demultiplexers --------------------------------------------------------------------


def test_a_dynamic_demultiplexer_inside_another_is_refused_at_load(client) -> None:
    assert not client.is_model_ready("dynamic_in_dynamic")
    rows = np.stack([_numbers(2), _numbers(2)])
    text = _refused(client, "dynamic_in_dynamic", [fp32("numbers", rows)])
    assert "StatusCode.UNAVAILABLE" in text
    assert "Pipeline is not loaded yet - dynamic_in_dynamic" in text
    assert "Functionality not implemented - pipeline dynamic_in_dynamic: node fan" in text


def test_the_refusal_is_in_the_log(server: ServerProcess) -> None:
    lines = [line for line in server.log().splitlines() if "dynamic_in_dynamic" in line]
    assert any("Functionality not implemented" in line for line in lines), lines


def test_one_dynamic_demultiplexer_inside_a_static_one_serves(client) -> None:
    assert client.is_model_ready("static_around_dynamic")
    metadata = client.get_model_metadata("static_around_dynamic")
    # The node takes [1, any]; the entry's static count adds a first dimension of 2.
    assert _shapes(metadata.inputs) == {"numbers": [2, 1, -1]}
    assert _shapes(metadata.outputs) == {"result": [2, -1, 1, 10]}
    rows = np.stack([_numbers(3), _numbers(3) + 100]).astype(np.float32)  # both: 3 copies
    rows[1, 0, 0] = 3
    result = client.infer("static_around_dynamic", [fp32("numbers", rows)]).as_numpy("result")
    assert result.shape == (2, 3, 1, 10)
    for row in range(2):
        for copy in range(3):
            np.testing.assert_allclose(result[row, copy], rows[row] + copy + 1)


def test_everything_else_keeps_serving(client) -> None:
    assert client.is_server_ready()
    x = _numbers(0.25)
    np.testing.assert_array_equal(
        client.infer("add_one", [fp32("input", x)]).as_numpy("output"), x + 1
    )
