"""Pre-processing: UINT8 pixels [N] -> FP32 features [1, N] in [0, 1], for the model."""

import numpy as np

from pyovms import Tensor


class OvmsPythonModel:
    def initialize(self, kwargs):
        self.output = kwargs["output_names"][0]  # "features"

    def execute(self, inputs):
        (pixels,) = inputs
        if pixels.datatype != "UINT8":
            raise ValueError(f"pixels must be UINT8, got {pixels.datatype}")
        features = np.array(pixels, np.float32).reshape(1, -1) / np.float32(255)
        return [Tensor(self.output, features)]
