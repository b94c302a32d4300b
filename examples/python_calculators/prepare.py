"""Build the model the image_mean graph runs, with the OpenVINO Python API.

    python examples/python_calculators/prepare.py
    ovmsx --config_path examples/python_calculators/config.json --port 9000

``channel_mean``: FP32 ``image`` [1, 3, 32, 32] -> ``mean`` [1, 3], the mean of each channel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops

HERE = Path(__file__).resolve().parent


def build_model() -> None:
    image = ops.parameter([1, 3, 32, 32], ov.Type.f32, name="image")
    mean = ops.reduce_mean(image, ops.constant(np.array([2, 3], np.int64)), keep_dims=False)
    mean.output(0).set_names({"mean"})
    path = HERE / "models" / "channel_mean" / "1" / "model.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov.Model([mean], [image], "channel_mean"), path, compress_to_fp16=False)


if __name__ == "__main__":
    build_model()
    print(f"model written under {HERE / 'models'}")
