"""The built-in image_transformation node, called through its C ABI with ctypes, against a slow,
obviously correct numpy reference of OVMS's semantics (cv2's INTER_LINEAR resize, its BGR/RGB
to GRAY weights, mean then scale per target channel)."""

from __future__ import annotations

import ctypes
import json
import threading

import numpy as np
import openvino as ov
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openvino import opset13 as ops
from openvino import preprocess
from test_builtin_abi import FP32, FP64, Input, Node, TensorInfo, load, node, rss_bytes

from ovmsx import custom_nodes
from ovmsx._core import CustomNodeLibrary, Tensor
from ovmsx.status import StatusCode, StatusError

BAD_PARAMS, NOT_INITIALIZED, BAD_INPUTS = 1, 2, 3
GRAY_WEIGHTS = {"BGR": (0.114, 0.587, 0.299), "RGB": (0.299, 0.587, 0.114)}


@pytest.fixture(scope="module")
def library() -> ctypes.CDLL:
    return load("image_transformation")


def image(height: int, width: int, channels: int = 3, seed: int = 0) -> np.ndarray:
    """An NHWC float32 image with values in [0, 255)."""
    rng = np.random.default_rng(seed)
    return (rng.random((1, height, width, channels)) * 255).astype(np.float32)


def in_layout(nhwc: np.ndarray, layout: str) -> np.ndarray:
    return np.ascontiguousarray(nhwc.transpose(0, 3, 1, 2) if layout == "NCHW" else nhwc)


def resize_axis(array: np.ndarray, axis: int, size: int) -> np.ndarray:
    """cv2.resize INTER_LINEAR along one axis: half-pixel centres, edges clamped."""
    length = array.shape[axis]
    source = np.clip((np.arange(size) + 0.5) * length / size - 0.5, 0, length - 1)
    low = np.floor(source).astype(np.int64)
    high = np.minimum(low + 1, length - 1)
    shape = [1] * array.ndim
    shape[axis] = size
    weight = (source - low).reshape(shape)
    return np.take(array, low, axis) * (1 - weight) + np.take(array, high, axis) * weight


def reference(nhwc: np.ndarray, params: dict[str, str]) -> np.ndarray:
    """What OVMS's node computes for an NHWC image, in float64, in the target layout."""
    result = nhwc.astype(np.float64)
    source = params.get("original_image_color_order", "BGR")
    target = params.get("target_image_color_order", source)
    if source != target:
        if target == "GRAY":
            result = (result * GRAY_WEIGHTS[source]).sum(axis=3, keepdims=True)
        elif source == "GRAY":
            result = np.repeat(result, 3, axis=3)
        else:
            result = result[..., ::-1]
    height = int(params.get("target_image_height", -1))
    width = int(params.get("target_image_width", -1))
    if height != -1:
        result = resize_axis(result, 1, height)
    if width != -1:
        result = resize_axis(result, 2, width)
    if "mean_values" in params:
        result = result - np.array(json.loads(params["mean_values"]))
    if "scale_values" in params:
        result = result / np.array(json.loads(params["scale_values"]))
    elif "scale" in params:
        result = result / float(params["scale"])
    return in_layout(result, params.get("target_image_layout", params["original_image_layout"]))


def transform(library: ctypes.CDLL, nhwc: np.ndarray, params: dict[str, str]) -> np.ndarray:
    with node(library, params) as n:
        source = in_layout(nhwc, params["original_image_layout"])
        outputs = n.execute([Input("image", source)])
    assert list(outputs) == ["image"]
    return outputs["image"]


def assert_matches(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize(
    ("params", "inputs", "outputs"),
    [
        ({"original_image_layout": "NHWC"}, (1, 0, 0, 3), (1, 0, 0, 3)),
        ({"original_image_layout": "NCHW"}, (1, 3, 0, 0), (1, 3, 0, 0)),
        (
            {
                "original_image_layout": "NHWC",
                "target_image_layout": "NCHW",
                "target_image_width": "224",
                "target_image_height": "160",
            },
            (1, 0, 0, 3),
            (1, 3, 160, 224),
        ),
        (
            {"original_image_layout": "NCHW", "original_image_color_order": "GRAY"},
            (1, 1, 0, 0),
            (1, 1, 0, 0),
        ),
        (
            {
                "original_image_layout": "NCHW",
                "target_image_layout": "NHWC",
                "target_image_color_order": "GRAY",
                "target_image_height": "32",
            },
            (1, 3, 0, 0),
            (1, 32, 0, 1),
        ),
    ],
)
def test_metadata_marks_per_request_sides_with_zero(
    library: ctypes.CDLL,
    params: dict[str, str],
    inputs: tuple[int, ...],
    outputs: tuple[int, ...],
) -> None:
    with node(library, params) as n:
        assert n.inputs_info() == [TensorInfo("image", inputs, FP32)]
        assert n.outputs_info() == [TensorInfo("image", outputs, FP32)]
    # As in OVMS, the metadata needs only the params, not an initialized node.
    bare = Node(library, params, initialize=False)
    assert bare.inputs_info() == [TensorInfo("image", inputs, FP32)]
    assert bare.outputs_info() == [TensorInfo("image", outputs, FP32)]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"original_image_layout": "NCWH"},
        {"original_image_layout": "NHWC", "original_image_color_order": "YUV"},
        {"original_image_layout": "NHWC", "target_image_layout": "CHW"},
        {"original_image_layout": "NHWC", "target_image_width": "0"},
        {"original_image_layout": "NHWC", "target_image_height": "tall"},
        {"original_image_layout": "NHWC", "mean_values": "[1.0,2.0]"},
        {"original_image_layout": "NHWC", "mean_values": "1.0,2.0,3.0"},
        {"original_image_layout": "NHWC", "mean_values": "[1.0,,3.0]"},
        {"original_image_layout": "NHWC", "scale_values": "[1.0,0,1.0]"},
        {"original_image_layout": "NHWC", "scale": "0"},
        {"original_image_layout": "NHWC", "scale": "nan"},
        {
            "original_image_layout": "NHWC",
            "target_image_color_order": "GRAY",
            "mean_values": "[1.0,2.0,3.0]",
        },
    ],
)
def test_bad_params_fail_initialize(library: ctypes.CDLL, params: dict[str, str]) -> None:
    n = Node(library, params)
    assert n.status == BAD_PARAMS
    assert n.manager.value is None


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_without_steps_the_image_is_unchanged(library: ctypes.CDLL, layout: str) -> None:
    source = image(5, 7)
    np.testing.assert_array_equal(
        transform(library, source, {"original_image_layout": layout}), in_layout(source, layout)
    )


@pytest.mark.parametrize(("original", "target"), [("NCHW", "NHWC"), ("NHWC", "NCHW")])
def test_layout_conversion_is_exact(library: ctypes.CDLL, original: str, target: str) -> None:
    source = image(6, 9)
    params = {"original_image_layout": original, "target_image_layout": target}
    np.testing.assert_array_equal(transform(library, source, params), in_layout(source, target))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize(
    ("original", "target"),
    [
        ("BGR", "RGB"),
        ("RGB", "BGR"),
        ("GRAY", "BGR"),
        ("GRAY", "RGB"),
        ("BGR", "GRAY"),
        ("RGB", "GRAY"),
        ("GRAY", "GRAY"),
    ],
)
def test_color_order_conversion(
    library: ctypes.CDLL, layout: str, original: str, target: str
) -> None:
    source = image(4, 5, channels=1 if original == "GRAY" else 3)
    params = {
        "original_image_layout": layout,
        "original_image_color_order": original,
        "target_image_color_order": target,
    }
    assert_matches(transform(library, source, params), reference(source, params))


@pytest.mark.parametrize(
    "steps",
    [
        {"mean_values": "[123.675, 116.28, 103.53]"},
        {"scale_values": "[58.395,57.12,57.375]"},
        {"mean_values": "[1,2,3]", "scale_values": "[2,4,8]"},
        {"scale": "255"},
        {"mean_values": "[10,20,30]", "scale": "2.5"},
        {"scale": "7", "scale_values": "[1,2,4]"},  # scale_values wins, as in OVMS
    ],
)
def test_mean_and_scale_per_target_channel(library: ctypes.CDLL, steps: dict[str, str]) -> None:
    source = image(3, 4)
    params = {"original_image_layout": "NHWC", "target_image_layout": "NCHW", **steps}
    assert_matches(transform(library, source, params), reference(source, params))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize(
    ("height", "width"), [(16, 24), (5, 7), (32, 3), (10, -1), (-1, 30), (1, 1)]
)
def test_resize_is_cv2_linear(library: ctypes.CDLL, layout: str, height: int, width: int) -> None:
    source = image(10, 12, seed=abs(height * width))
    params = {
        "original_image_layout": layout,
        "target_image_height": str(height),
        "target_image_width": str(width),
    }
    assert_matches(transform(library, source, params), reference(source, params))


@st.composite
def configs(draw: st.DrawFn) -> tuple[np.ndarray, dict[str, str]]:
    orders = st.sampled_from(["BGR", "RGB", "GRAY"])
    layouts = st.sampled_from(["NCHW", "NHWC"])
    params = {"original_image_layout": draw(layouts), "original_image_color_order": draw(orders)}
    for key, values in [
        ("target_image_layout", layouts),
        ("target_image_color_order", orders),
        ("target_image_height", st.integers(1, 24).map(str)),
        ("target_image_width", st.integers(1, 24).map(str)),
        ("scale", st.sampled_from(["0.5", "255", "-3"])),
    ]:
        if draw(st.booleans()):
            params[key] = draw(values)
    channels = (
        1
        if params.get("target_image_color_order", params["original_image_color_order"]) == "GRAY"
        else 3
    )
    per_channel = st.lists(
        st.floats(-100, 100).filter(lambda v: abs(v) > 0.01), min_size=channels, max_size=channels
    )
    for key in ("mean_values", "scale_values"):
        if draw(st.booleans()):
            params[key] = json.dumps(draw(per_channel))
    source_channels = 1 if params["original_image_color_order"] == "GRAY" else 3
    height, width = draw(st.integers(1, 20)), draw(st.integers(1, 20))
    return image(height, width, source_channels, seed=draw(st.integers(0, 1000))), params


@settings(max_examples=80, deadline=None)
@given(case=configs())
def test_any_config_matches_reference(
    library: ctypes.CDLL, case: tuple[np.ndarray, dict[str, str]]
) -> None:
    source, params = case
    assert_matches(transform(library, source, params), reference(source, params))


def test_resize_keeps_a_constant_image_constant(library: ctypes.CDLL) -> None:
    source = np.full((1, 7, 11, 3), 42.5, np.float32)
    params = {
        "original_image_layout": "NHWC",
        "target_image_height": "19",
        "target_image_width": "4",
    }
    np.testing.assert_allclose(
        transform(library, source, params), np.full((1, 19, 4, 3), 42.5), rtol=1e-6
    )


def test_gray_image_resized_and_expanded(library: ctypes.CDLL) -> None:
    source = image(9, 6, channels=1)
    params = {
        "original_image_layout": "NCHW",
        "original_image_color_order": "GRAY",
        "target_image_color_order": "RGB",
        "target_image_layout": "NHWC",
        "target_image_height": "12",
        "target_image_width": "4",
        "mean_values": "[1,2,3]",
        "scale_values": "[4,5,6]",
    }
    assert_matches(transform(library, source, params), reference(source, params))


OVMS_DEMO = {
    # Shaped like OVMS's "onnx model with server preprocessing" demo config.
    "original_image_layout": "NHWC",
    "target_image_layout": "NCHW",
    "original_image_color_order": "BGR",
    "target_image_color_order": "RGB",
    "target_image_height": "224",
    "target_image_width": "224",
    "mean_values": "[123.675,116.28,103.53]",
    "scale_values": "[58.395,57.12,57.375]",
}


def test_full_preprocessing_matches_reference(library: ctypes.CDLL) -> None:
    source = image(300, 400)
    assert_matches(transform(library, source, OVMS_DEMO), reference(source, OVMS_DEMO))


def test_full_preprocessing_matches_openvino_python_preprocessing(library: ctypes.CDLL) -> None:
    # The same steps through OpenVINO's own Python API, compiled on CPU in f32.
    source = image(240, 320)
    parameter = ops.parameter([1, 3, 224, 224], ov.Type.f32)
    ppp = preprocess.PrePostProcessor(ov.Model([ops.result(parameter)], [parameter]))
    ppp.input().tensor().set_layout(ov.Layout("NHWC")).set_spatial_dynamic_shape()
    ppp.input().tensor().set_color_format(preprocess.ColorFormat.BGR)
    ppp.input().model().set_layout(ov.Layout("NCHW"))
    steps = ppp.input().preprocess().convert_color(preprocess.ColorFormat.RGB)
    steps.resize(preprocess.ResizeAlgorithm.RESIZE_LINEAR)
    steps.mean([123.675, 116.28, 103.53]).scale([58.395, 57.12, 57.375])
    compiled = ov.Core().compile_model(ppp.build(), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    assert_matches(transform(library, source, OVMS_DEMO), compiled([source])[0])


def test_one_node_takes_images_of_any_size(library: ctypes.CDLL) -> None:
    params = {"original_image_layout": "NCHW", "target_image_height": "8"}
    with node(library, params) as n:
        for height, width in [(4, 4), (17, 3), (8, 31), (1, 1), (4, 4)]:
            source = image(height, width, seed=width)
            result = n.execute([Input("image", in_layout(source, "NCHW"))])["image"]
            assert_matches(result, reference(source, params))


@pytest.mark.parametrize(
    "steps",
    [
        {},
        {"target_image_layout": "NHWC"},
        {"target_image_color_order": "RGB"},
        {"target_image_width": "20"},
        {"scale": "3"},
        OVMS_DEMO,
    ],
)
def test_the_input_is_left_untouched(library: ctypes.CDLL, steps: dict[str, str]) -> None:
    source = in_layout(image(20, 20), "NCHW")
    pristine = source.copy()
    params = steps | {"original_image_layout": "NCHW"}
    with node(library, params) as n:
        for _ in range(3):
            result = n.execute([Input("image", source)])["image"]
            np.testing.assert_array_equal(source, pristine)
    assert_matches(result, reference(image(20, 20), params))


WRONG_INPUTS = {
    "channels": Input("image", np.zeros((1, 4, 4, 1), np.float32)),
    "rank": Input("image", np.zeros((4, 4, 3), np.float32)),
    "batch": Input("image", np.zeros((2, 4, 4, 3), np.float32)),
    "empty": Input("image", np.zeros((1, 0, 4, 3), np.float32)),
    "fp64": Input("image", np.zeros((1, 4, 4, 3), np.float64), precision=FP64),
    "bytes": Input("image", np.zeros((1, 4, 4, 3), np.float32), data_bytes=4),
    "name": Input("picture", np.zeros((1, 4, 4, 3), np.float32)),
}


@pytest.mark.parametrize("case", WRONG_INPUTS)
def test_wrong_inputs_fail(library: ctypes.CDLL, case: str) -> None:
    with node(library, {"original_image_layout": "NHWC"}) as n:
        status, outputs, _ = n.execute_raw([WRONG_INPUTS[case]])
        assert status == BAD_INPUTS
        assert not outputs


def test_execute_without_a_node_fails(library: ctypes.CDLL) -> None:
    n = Node(library, {})
    assert n.status == BAD_PARAMS
    assert n.execute_raw([Input("image", image(2, 2))])[0] == NOT_INITIALIZED


def test_wrong_inputs_and_released_outputs_do_not_leak(library: ctypes.CDLL) -> None:
    wrong = [WRONG_INPUTS["channels"]]
    good = [Input("image", image(64, 64))]
    with node(library, {"original_image_layout": "NHWC", "scale": "2"}) as n:

        def cycle(times: int) -> None:
            for _ in range(times):
                assert n.execute_raw(wrong)[0] == BAD_INPUTS
                n.execute(good)

        cycle(200)
        before = rss_bytes()
        cycle(1000)  # leaking the 48 kB outputs would grow RSS by about 48 MB
        assert rss_bytes() - before < 8 * 2**20


def test_concurrent_executes(library: ctypes.CDLL) -> None:
    params = OVMS_DEMO | {"target_image_height": "32", "target_image_width": "48"}
    failures: list[str] = []
    with node(library, params) as n:

        def work(seed: int) -> None:
            source = image(20 + seed, 30 + seed, seed=seed)
            want = reference(source, params)
            for _ in range(40):
                try:
                    assert_matches(n.execute([Input("image", source)])["image"], want)
                except AssertionError as error:
                    failures.append(str(error))
                    return

        threads = [threading.Thread(target=work, args=(seed,), daemon=True) for seed in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert failures == []


def test_minus_one_sizes_mean_unchanged_as_in_ovms(library: ctypes.CDLL) -> None:
    source = image(5, 6)
    params = {
        "original_image_layout": "NHWC",
        "target_image_height": "-1",
        "target_image_width": "-1",
    }
    np.testing.assert_array_equal(transform(library, source, params), source)


def test_debug_prints_the_settings_and_shapes(
    library: ctypes.CDLL, capfd: pytest.CaptureFixture[str]
) -> None:
    transform(library, image(3, 4), {"original_image_layout": "NHWC", "debug": "true"})
    printed = capfd.readouterr().out
    assert "layout NHWC->NHWC, color BGR->BGR" in printed
    assert "[1,3,4,3] -> [1,3,4,3]" in printed


# Through ovmsx's own loader (ovmsx._core.CustomNodeLibrary), as a pipeline runs the node.


def test_served_by_the_ovmsx_loader() -> None:
    library = CustomNodeLibrary.load(str(custom_nodes.built_in("image_transformation")))
    instance = library.initialize(OVMS_DEMO)
    assert [(i.name, i.shape) for i in instance.inputs_info()] == [("image", [1, -1, -1, 3])]
    assert [(i.name, i.shape) for i in instance.outputs_info()] == [("image", [1, 3, 224, 224])]
    source = image(120, 90)
    (output,) = instance.execute([Tensor("image", source)])
    assert (output.name, output.datatype, output.shape) == ("image", "FP32", (1, 3, 224, 224))
    assert_matches(np.asarray(output), reference(source, OVMS_DEMO))
    instance.close()


def test_bad_params_through_the_loader_fail_initialize() -> None:
    library = CustomNodeLibrary.load(str(custom_nodes.built_in("image_transformation")))
    with pytest.raises(StatusError) as caught:
        library.initialize({"original_image_layout": "NHWC", "scale": "0"})
    assert caught.value.code == StatusCode.NODE_LIBRARY_INITIALIZE_FAILED
