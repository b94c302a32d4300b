"""Post-processing: logits [1, K] -> softmax probabilities [K] (FP32) and the label [1] (INT32)."""

import numpy as np

from pyovms import Tensor


class OvmsPythonModel:
    def execute(self, inputs):
        (logits,) = inputs  # named "logits" by the converter's tag_to_output_tensor_names
        scores = np.array(logits)[0]
        exp = np.exp(scores - scores.max())
        probabilities = (exp / exp.sum()).astype(np.float32)
        # INT32, not numpy's default int64: OVMS labels an int64 buffer "INT32" (format "l").
        label = np.array([probabilities.argmax()], np.int32)
        return [Tensor("probabilities", probabilities), Tensor("label", label)]
