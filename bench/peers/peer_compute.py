"""What every peer server computes, whatever its API, so that only the serving differs.

Runs inside each peer's own interpreter (Triton's Python stub, KServe, MLServer): it needs numpy,
and openvino only for ``openvino`` models. ``make(**spec)`` turns one model's spec (written by
``models.write_spec``) into a function from the input array to the output array.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Compute = Callable[[np.ndarray], np.ndarray]


def add_one(x: np.ndarray) -> np.ndarray:
    return x + np.float32(1)


def identity(x: np.ndarray) -> np.ndarray:
    return x


def openvino_model(model_file: str, reshape: dict[str, list[int]], properties: dict) -> Compute:
    """Compile ``model_file`` as ovmsx's config does (same static shape, same properties) and
    return a function that runs it on one reused infer request.

    The peers call it from one thread at a time (Triton: one model instance; KServe and
    MLServer: their event loop), so one request suffices, as ovmsx's latency hint gives one
    stream.
    """
    import openvino as ov

    core = ov.Core()
    model = core.read_model(model_file)
    if reshape:
        model.reshape(reshape)
    request = core.compile_model(model, "CPU", properties).create_infer_request()

    def infer(x: np.ndarray) -> np.ndarray:
        # infer() copies the outputs out of OpenVINO's buffers (share_outputs=False), so the
        # array stays valid after the next call.
        return request.infer([x])[0]

    return infer


def make(
    kind: str, model_file: str = "", reshape: dict | None = None, properties: dict | None = None
) -> Compute:
    if kind == "add_one":
        return add_one
    if kind == "identity":
        return identity
    if kind == "openvino":
        return openvino_model(model_file, reshape or {}, properties or {})
    raise ValueError(f"unknown computation {kind!r}")
