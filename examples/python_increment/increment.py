"""Adds one to every element of its input; one handler for every node of the chain.

Each node gets its own ``OvmsPythonModel`` object, and ``initialize`` tells it the name of the
node's output stream, so the same file serves ``first_python_node`` (which answers
``second_number``), ``second_python_node`` (``third_number``) and ``third_python_node``
(``last_number``).
"""

import numpy as np

from pyovms import Tensor


class OvmsPythonModel:
    def initialize(self, kwargs):
        self.node_name = kwargs["node_name"]
        self.output_name = kwargs["output_names"][0]

    def execute(self, inputs):
        # A numeric Tensor reads as a numpy array without a copy; the sum is a new array of
        # the same dtype, and Tensor() labels it with the matching KServe datatype (FP32).
        numbers = np.asarray(inputs[0])
        return [Tensor(self.output_name, numbers + 1)]
