"""--mean, --scale, --color_format and --precision: OVMS's spellings, its codes for bad values,
and where the flags may appear (single-model mode only; config.json has no such keys)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import ValidationError

from ovmsx.config import ModelConfig
from ovmsx.config.cli_options import parse_options
from ovmsx.config.config_source import read_servables
from ovmsx.config.errors import UsageError
from ovmsx.config.preprocessing import Preprocessing, parse_preprocessing, parse_values
from ovmsx.status import StatusCode, StatusError

SINGLE = ["--model_name", "m", "--model_path", "models/m", "--port", "9000"]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("2", 2.0),
        (" -1.5 ", -1.5),
        ("[1,2,3]", (1.0, 2.0, 3.0)),
        ("[ 1, 2.5 , 3 ]", (1.0, 2.5, 3.0)),
        ("(58.395,57.12,57.375)", (58.395, 57.12, 57.375)),
        ("[4]", (4.0,)),
        ("", None),
        (None, None),
    ],
)
def test_values_are_a_float_or_one_per_channel(text: str | None, values: object) -> None:
    assert parse_values("mean", text) == values


@pytest.mark.parametrize("text", ["x", "1,2,3", "[1,2", "[1;2]", "[]", "(1,,2)", "[1,2)"])
def test_values_that_are_not_floats(text: str) -> None:
    with pytest.raises(StatusError) as caught:
        parse_values("scale", text)
    assert caught.value.code == StatusCode.FLOAT_WRONG_FORMAT
    assert f"--scale {text!r}" in str(caught.value)


def test_pairs_name_the_client_and_the_model_as_ovms_reads_them() -> None:
    # --color_format is MODEL:CLIENT, --precision CLIENT:MODEL; both case-insensitive.
    found = parse_preprocessing(color_format="bgr:Nv12", precision="uint8:fp32")
    assert found == Preprocessing(color=("NV12", "BGR"), element_types=("u8", "f32"))
    assert found.step_arguments() == {
        "color": ("NV12", "BGR"),
        "element_types": ("u8", "f32"),
        "mean": None,
        "scale": None,
    }


def test_step_arguments_give_lists_per_channel() -> None:
    found = parse_preprocessing(mean="[1,2,3]", scale="2")
    assert found.step_arguments()["mean"] == [1.0, 2.0, 3.0]
    assert found.step_arguments()["scale"] == 2.0


def test_nothing_given_is_no_preprocessing() -> None:
    assert parse_preprocessing() is None
    assert parse_preprocessing("", "", "", "") is None


@pytest.mark.parametrize(
    ("flag", "text", "code"),
    [
        ("color_format", "RGB", StatusCode.COLOR_FORMAT_WRONG_FORMAT),
        ("color_format", "RGB:YUV", StatusCode.COLOR_FORMAT_WRONG_FORMAT),
        ("color_format", ":BGR", StatusCode.COLOR_FORMAT_WRONG_FORMAT),
        ("precision", "fp32", StatusCode.PRECISION_WRONG_FORMAT),
        ("precision", "u8:f32", StatusCode.PRECISION_WRONG_FORMAT),
        ("precision", "BOOL:FP32", StatusCode.PRECISION_WRONG_FORMAT),
    ],
)
def test_bad_pairs(flag: str, text: str, code: StatusCode) -> None:
    with pytest.raises(StatusError) as caught:
        parse_preprocessing(**{flag: text})
    assert caught.value.code == code
    assert f"--{flag} {text!r}" in str(caught.value)


def test_the_command_line_carries_them_into_the_model_config() -> None:
    argv = [*SINGLE, "--layout", "NHWC:NCHW", "--mean", "[1,2,3]", "--scale", "4"]
    config = parse_options([*argv, "--precision", "UINT8:FP32"]).single_model_config()
    assert config.preprocessing == Preprocessing(
        mean=(1.0, 2.0, 3.0), scale=4.0, element_types=("u8", "f32")
    )
    assert parse_options(SINGLE).single_model_config().preprocessing is None


@pytest.mark.parametrize("flag", ["mean", "scale"])
def test_mean_and_scale_need_a_layout(flag: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_options([*SINGLE, f"--{flag}", "1"])
    assert str(caught.value) == f"--{flag} parameter requires --layout to be set"
    assert caught.value.exit_code == 64
    parse_options([*SINGLE, f"--{flag}", "1", "--layout", "NC"])


def test_a_bad_value_stops_at_parsing_with_the_code() -> None:
    with pytest.raises(UsageError) as caught:
        parse_options([*SINGLE, "--precision", "FP32"])
    assert "PRECISION_WRONG_FORMAT" in str(caught.value)


@pytest.mark.parametrize("flag", ["mean", "scale", "color_format", "precision"])
def test_they_belong_to_single_model_mode(flag: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_options(["--config_path", "c.json", "--port", "9000", f"--{flag}", "1:2"])
    assert str(caught.value) == "Model parameters in CLI are exclusive with the config file"


@pytest.mark.parametrize("key", ["mean", "scale", "color_format", "precision"])
def test_config_json_has_no_such_keys(key: str) -> None:
    with pytest.raises(ValidationError) as caught:
        ModelConfig.model_validate({"name": "m", "base_path": "/m", key: "1"})
    assert caught.value.errors()[0]["type"] == "extra_forbidden"


def test_a_task_graph_takes_no_preprocessing() -> None:
    with pytest.raises(UsageError) as caught:
        parse_options([*SINGLE, "--task", "embeddings", "--precision", "uint8:fp32"])
    assert str(caught.value) == "--precision applies to a model, not to a --task graph"


def test_a_graph_folder_is_served_without_them_and_the_log_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "graph.pbtxt").write_text('input_stream: "in"\n')
    argv = ["--model_name", "g", "--model_path", str(tmp_path), "--port", "9000"]
    with caplog.at_level(logging.WARNING, logger="ovmsx.config"):
        read = read_servables(parse_options([*argv, "--layout", "NC", "--mean", "1"]))
    assert [graph.name for graph in read.servables.graphs] == ["g"]
    assert f"{tmp_path} holds a graph, which is served without them" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ovmsx.config"):
        read_servables(parse_options(argv))
    assert "served without them" not in caplog.text
