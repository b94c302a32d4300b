"""pipeline_config_list and custom_node_library_config_list entries: shapes OVMS accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ovmsx.config.pipeline_config import CustomNodeLibraryConfig, PipelineConfig

SOURCE = {"node_name": "request", "data_item": "x"}


def node(**fields) -> dict:
    return {
        "name": "n",
        "inputs": [{"input": SOURCE}],
        "outputs": [{"data_item": "out", "alias": "o"}],
        **fields,
    }


def pipeline(*nodes: dict, **fields) -> dict:
    return {
        "name": "p",
        "inputs": ["x"],
        "nodes": list(nodes),
        "outputs": [{"y": {"node_name": "n", "data_item": "o"}}],
        **fields,
    }


def test_a_custom_node_names_its_library_with_the_ovms_key() -> None:
    config = PipelineConfig.model_validate(
        pipeline(node(type="custom", library_name="lib", params={"k": "v"}))
    )
    (parsed,) = config.nodes
    assert (parsed.custom_library, parsed.model_name, parsed.params) == ("lib", None, {"k": "v"})
    assert parsed.input_sources[0][0] == "input"
    assert config.output_sources[0][1].node_name == "n"


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"type": "DL model"}, "needs model_name"),
        ({"type": "DL model", "model_name": "m", "library_name": "l"}, "takes no library_name"),
        ({"type": "custom"}, "needs library_name"),
        ({"type": "custom", "library_name": "l", "model_name": "m"}, "takes no model_name"),
        ({"type": "python", "model_name": "m"}, "type"),
        ({"type": "custom", "library_name": "l", "params": {"k": 1}}, "params"),
        ({"type": "DL model", "model_name": "m", "version": 0}, "version"),
        ({"type": "DL model", "model_name": "m", "demultiply_count": 10001}, "demultiply_count"),
        ({"type": "DL model", "model_name": "m", "shape": "(1,10)"}, "shape"),
        (
            {"type": "DL model", "model_name": "m", "inputs": [{"a": SOURCE, "b": SOURCE}]},
            "one key",
        ),
    ],
)
def test_bad_nodes_are_refused_with_the_reason(fields, problem) -> None:
    with pytest.raises(ValidationError, match=problem):
        PipelineConfig.model_validate(pipeline(node(**fields)))


def test_demultiply_count_zero_means_dynamic_as_in_ovms() -> None:
    config = PipelineConfig.model_validate(
        pipeline(node(type="DL model", model_name="m", demultiply_count=0))
    )
    assert config.nodes[0].demultiply_count == -1


def test_outputs_take_one_key_each() -> None:
    bad = pipeline(outputs=[{"y": SOURCE, "z": SOURCE}])
    with pytest.raises(ValidationError, match="one key"):
        PipelineConfig.model_validate(bad)


def test_library_path_is_relative_to_the_config_folder(tmp_path: Path) -> None:
    library = CustomNodeLibraryConfig.model_validate(
        {"name": "lib", "base_path": "nodes/libx.so"}, context={"config_dir": tmp_path}
    )
    assert library.path == tmp_path / "nodes" / "libx.so"
    with pytest.raises(ValidationError):
        CustomNodeLibraryConfig.model_validate({"name": "lib", "base_path": "x", "extra": 1})
