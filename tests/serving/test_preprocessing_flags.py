"""The single-model preprocessing flags served by the real server: each answer equals numpy
doing the same arithmetic on the same input, over gRPC and REST; wrong flags are refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from serving_process import ServerProcess, free_port, run_to_exit

H = W = 4
F32 = '{"INFERENCE_PRECISION_HINT": "f32"}'
MEAN = np.array([1, 2, 3], np.float32)
SCALE = np.array([2, 4, 8], np.float32)


def _nchw(x: np.ndarray) -> np.ndarray:
    return x.transpose(0, 3, 1, 2)


def _nv12(rgb_size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A random NV12 image in one plane: H rows of Y, then H/2 rows of interleaved U, V."""
    y = rng.integers(16, 236, (rgb_size[0], rgb_size[1]), dtype=np.uint8)
    uv = rng.integers(16, 241, (rgb_size[0] // 2, rgb_size[1]), dtype=np.uint8)
    return np.concatenate([y, uv])[None, :, :, None]


def _nv12_to_rgb(image: np.ndarray) -> np.ndarray:
    """BT.601 limited-range YUV to RGB, each chroma sample shared by a 2x2 block, in [0, 255]."""
    plane = image[0, :, :, 0].astype(np.float32)
    y = plane[:H]
    u = plane[H:, 0::2].repeat(2, axis=0).repeat(2, axis=1)
    v = plane[H:, 1::2].repeat(2, axis=0).repeat(2, axis=1)
    c, d, e = y - 16, u - 128, v - 128
    r = 1.164 * c + 1.596 * e
    g = 1.164 * c - 0.391 * d - 0.813 * e
    b = 1.164 * c + 2.018 * d
    return np.clip(np.stack([r, g, b], axis=-1), 0, 255)[None]


# flags, the client's (datatype, data), what the model's NCHW output must be, tolerance
Case = tuple[list[str], str, np.ndarray, Callable[[np.ndarray], np.ndarray], float]
_RNG = np.random.default_rng(7)
_NHWC_F32 = _RNG.uniform(-50, 300, (1, H, W, 3)).astype(np.float32)
_NHWC_U8 = _RNG.integers(0, 256, (1, H, W, 3), dtype=np.uint8)
_NCHW_F32 = _RNG.uniform(-50, 300, (1, 3, H, W)).astype(np.float32)
CASES: dict[str, Case] = {
    "scalar mean and scale": (
        ["--layout", "NCHW", "--mean", "1", "--scale", "2"],
        "FP32",
        _NCHW_F32,
        lambda x: (x - 1) / 2,
        1e-5,
    ),
    "per-channel mean and scale, uint8 client, NHWC client": (
        [
            "--layout",
            "NHWC:NCHW",
            "--mean",
            "[1,2,3]",
            "--scale",
            "(2, 4, 8)",
            "--precision",
            "uint8:fp32",
        ],
        "UINT8",
        _NHWC_U8,
        lambda x: _nchw((x.astype(np.float32) - MEAN) / SCALE),
        1e-5,
    ),
    "BGR client, RGB model": (
        ["--layout", "NHWC:NCHW", "--color_format", "rgb:bgr"],
        "FP32",
        _NHWC_F32,
        lambda x: _nchw(x[..., ::-1]),
        0,
    ),
    "every flag at once, in OVMS's order": (
        [
            "--layout",
            "NHWC:NCHW",
            "--scale",
            "[2,4,8]",
            "--mean",
            "[1,2,3]",
            "--precision",
            "UINT8:FP32",
            "--color_format",
            "BGR:RGB",
        ],
        "UINT8",
        _NHWC_U8,
        lambda x: _nchw((x[..., ::-1].astype(np.float32) - MEAN) / SCALE),
        1e-5,
    ),
    "NV12 client, RGB model": (
        ["--layout", "NHWC:NCHW", "--color_format", "RGB:NV12"],
        "FP32",
        _nv12((H, W), _RNG).astype(np.float32),
        lambda x: _nchw(_nv12_to_rgb(x)),
        1.0,
    ),
}


def _serve(tmp_path: Path, flags: list[str], model=None) -> tuple[ServerProcess, int]:
    base = sm.save(model or sm.identity([1, 3, H, W]), tmp_path / "model")
    rest_port = free_port()
    server = ServerProcess(
        [
            "--model_name",
            "pre",
            "--model_path",
            str(base),
            "--plugin_config",
            F32,
            *flags,
            "--rest_port",
            str(rest_port),
            "--rest_bind_address",
            "127.0.0.1",
        ],
        tmp_path,
    )
    return server, rest_port


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_served_answer_equals_numpy(case: str, tmp_path: Path) -> None:
    flags, datatype, data, expected, tolerance = CASES[case]
    server, rest_port = _serve(tmp_path, flags)
    try:
        server.wait_ready()
        want = expected(data)
        with grpcclient.InferenceServerClient(server.url) as client:
            (port,) = client.get_model_metadata("pre").inputs
            assert (port.datatype, list(port.shape)) == (datatype, list(data.shape))
            tensor = grpcclient.InferInput("input", list(data.shape), datatype)
            tensor.set_data_from_numpy(data)
            got = client.infer("pre", [tensor]).as_numpy("output")
        np.testing.assert_allclose(got, want, atol=tolerance, rtol=1e-6)
        with httpclient.InferenceServerClient(f"127.0.0.1:{rest_port}") as client:
            tensor = httpclient.InferInput("input", list(data.shape), datatype)
            tensor.set_data_from_numpy(data, binary_data=False)
            got = client.infer("pre", [tensor]).as_numpy("output")
        np.testing.assert_allclose(got, want, atol=tolerance, rtol=1e-6)
    finally:
        code = server.stop()
    assert code == 0, server.log()


def test_two_plane_nv12_takes_one_input_per_plane(tmp_path: Path) -> None:
    image = _nv12((H, W), np.random.default_rng(3)).astype(np.float32)
    planes = {
        "input/y": image[:, :H],
        "input/uv": image[:, H:].reshape(1, H // 2, W // 2, 2),
    }
    server, _ = _serve(tmp_path, ["--layout", "NHWC:NCHW", "--color_format", "BGR:NV12_2"])
    try:
        server.wait_ready()
        with grpcclient.InferenceServerClient(server.url) as client:
            ports = client.get_model_metadata("pre").inputs
            assert {p.name: list(p.shape) for p in ports} == {
                name: list(plane.shape) for name, plane in planes.items()
            }
            tensors = []
            for name, plane in planes.items():
                tensors.append(grpcclient.InferInput(name, list(plane.shape), "FP32"))
                tensors[-1].set_data_from_numpy(plane)
            got = client.infer("pre", tensors).as_numpy("output")
    finally:
        code = server.stop()
    assert code == 0, server.log()
    np.testing.assert_allclose(got, _nchw(_nv12_to_rgb(image)[..., ::-1]), atol=1.0)


@pytest.mark.parametrize(
    ("source", "data", "expected"),
    [
        ("NV12", _nv12((H, W), _RNG).astype(np.float32), lambda x: x[:, :H].transpose(0, 3, 1, 2)),
        ("RGB", _NHWC_F32, lambda x: _nchw(x @ np.array([[0.299], [0.587], [0.114]], np.float32))),
    ],
)
def test_a_gray_model_takes_color_images(
    source: str, data: np.ndarray, expected: Callable, tmp_path: Path
) -> None:
    flags = ["--layout", "NHWC:NCHW", "--color_format", f"GRAY:{source}"]
    server, _ = _serve(tmp_path, flags, sm.identity([1, 1, H, W]))
    try:
        server.wait_ready()
        with grpcclient.InferenceServerClient(server.url) as client:
            tensor = grpcclient.InferInput("input", list(data.shape), "FP32")
            tensor.set_data_from_numpy(data)
            got = client.infer("pre", [tensor]).as_numpy("output")
    finally:
        code = server.stop()
    assert code == 0, server.log()
    np.testing.assert_allclose(got, expected(data), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    ("model", "flags", "reason"),
    [
        (
            sm.two_inputs(),
            ["--layout", "NC", "--mean", "1"],
            "the model has 2 inputs; --mean, --scale, --color_format and --precision apply to "
            "a model of one input",
        ),
        (
            sm.identity([1, 3, H, W]),
            ["--layout", "NCHW", "--mean", "[1,2]"],
            "Number of channels and mean/values size mismatch: Channels = 3, mean/scale = 2",
        ),
        (
            sm.identity([1, 3, H, W]),
            ["--layout", "NCHW", "--precision", "uint8:uint8", "--scale", "2"],
            "Scale preprocessing can be applied to 'float' inputs",
        ),
    ],
    ids=["two inputs", "three channels, two means", "scale of integers"],
)
def test_a_model_the_flags_do_not_fit_fails_to_load_with_the_reason(
    model, flags: list[str], reason: str, tmp_path: Path
) -> None:
    # Served alone (--model_path), a model that does not load stops the server, as OVMS's
    # model manager fails to start; the log says why.
    base = sm.save(model, tmp_path / "model")
    args = ["--model_name", "pre", "--model_path", str(base), "--plugin_config", F32, *flags]
    code, output = run_to_exit([*args, "--port", str(free_port())], tmp_path)
    assert code == 1, output
    assert reason in output
    assert "Couldn't start model manager: pre did not load" in output


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        # Every message is checked in tests/config/test_preprocessing_options.py; these two
        # show that the command itself stops with them.
        (["--mean", "1"], "--mean parameter requires --layout to be set"),
        (["--layout", "NCHW", "--mean", "[1;2]"], "FLOAT_WRONG_FORMAT"),
    ],
)
def test_wrong_flags_stop_the_server_with_the_reason(
    flags: list[str], message: str, tmp_path: Path
) -> None:
    code, output = run_to_exit(
        ["--model_name", "pre", "--model_path", str(tmp_path), "--port", "9", *flags], tmp_path
    )
    assert code == 64
    assert message in output
