"""getInputsInfo / getOutputsInfo: conversion, failures and release (COMPAT.md §1.3)."""

from __future__ import annotations

import pytest
from counted_nodes import assert_balanced

from ovmsx._core import CustomNodeLibrary
from ovmsx.status import StatusCode, StatusError


def test_inputs_info(counted_node):
    node = counted_node("node_add")
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"add_value": "1"})
    before = node.counts()
    (info,) = instance.inputs_info()
    assert (info.name, info.datatype, info.shape) == ("input_numbers", "FP32", [1, -1])
    assert repr(info) == "TensorInfo(name='input_numbers', datatype='FP32', shape=[1, -1])"
    delta = node.counts() - before
    assert delta.allocated == 2  # the array and one dims
    assert_balanced(delta)
    instance.close()


def test_outputs_info_skips_unnamed_entries_but_releases_them(counted_node):
    node = counted_node("node_add")
    instance = CustomNodeLibrary.load(str(node.path)).initialize({"add_value": "1"})
    before = node.counts()
    infos = instance.outputs_info()
    assert [(i.name, i.datatype, i.shape) for i in infos] == [("output_numbers", "FP32", [1, -1])]
    delta = node.counts() - before
    assert delta.allocated == 3  # the array and two dims, one of an unnamed entry
    assert_balanced(delta)
    instance.close()


def test_tensor_info_is_read_only(node_path):
    instance = CustomNodeLibrary.load(str(node_path("node_add"))).initialize({})
    (info,) = instance.inputs_info()
    with pytest.raises(AttributeError):
        info.name = "other"
    instance.close()


@pytest.mark.parametrize("method", ["inputs_info", "outputs_info"])
@pytest.mark.parametrize(
    ("params", "code", "details"),
    [
        ({"mode": "fail"}, StatusCode.NODE_LIBRARY_METADATA_FAILED, "{fn} returned 3"),
        ({"mode": "null"}, StatusCode.NODE_LIBRARY_OUTPUTS_CORRUPTED, "{fn} returned NULL info"),
        (
            {"mode": "count", "count": "0"},
            StatusCode.NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT,
            "{fn} returned infoCount 0",
        ),
        (
            {"mode": "count", "count": "-2"},
            StatusCode.NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT,
            "{fn} returned infoCount -2",
        ),
        (  # names become Python str, which holds UTF-8 only
            {"mode": "latin1"},
            StatusCode.NODE_LIBRARY_METADATA_FAILED,
            "{fn} returned a name that is not UTF-8",
        ),
    ],
)
def test_metadata_failures(counted_node, method, params, code, details):
    node = counted_node("node_bad_metadata")
    instance = CustomNodeLibrary.load(str(node.path)).initialize(params)
    before = node.counts()
    with pytest.raises(StatusError) as caught:
        getattr(instance, method)()
    function = "getInputsInfo" if method == "inputs_info" else "getOutputsInfo"
    assert caught.value.code == code
    expected = details.format(fn=function) + f"; library: {node.path}"
    assert caught.value.details == expected
    assert str(caught.value).endswith(f" - {expected}")
    delta = node.counts() - before
    assert delta.allocated == (1 if params["mode"] in ("count", "latin1") else 0)
    assert_balanced(delta)
    instance.close()
