"""Decoding in the graph: one encoded image (JPEG, PNG, ...) -> UINT8 BGR pixels [1, 640, 640, 3].

The request's BYTES input arrives packed as KServe sends it: a 4-byte little-endian length,
then the file's bytes. Written with OpenCV and the standard library only, so it runs unchanged
on OVMS.
"""

import struct

import cv2
import numpy as np

from pyovms import Tensor

SIZE = 640  # the model's input side (prepare.py)


class OvmsPythonModel:
    def initialize(self, kwargs):
        self.output = kwargs["output_names"][0]  # "pixels"

    def execute(self, inputs):
        (image,) = inputs
        if image.datatype != "BYTES":
            raise ValueError(f"image must be BYTES (an encoded file), got {image.datatype}")
        packed = bytes(image)
        (length,) = struct.unpack_from("<I", packed)
        encoded = np.frombuffer(packed, np.uint8, count=length, offset=4)
        pixels = cv2.imdecode(encoded, cv2.IMREAD_COLOR)  # BGR, as ovmsx and OVMS decode
        if pixels is None:
            raise ValueError("image is not a file OpenCV can decode")
        resized = cv2.resize(pixels, (SIZE, SIZE))  # bilinear, as the server resizes
        return [Tensor(self.output, resized[np.newaxis])]
