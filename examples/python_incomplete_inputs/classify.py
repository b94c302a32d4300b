"""Remembers the labels a stream sent, and answers each image with one of them.

There is no model here: each image stands for its own class scores, one FP32 value per label,
and the answer is the label with the highest score. What matters is the shape of the
conversation: the labels come once, in a request of their own, and every later image on the
same stream is classified with them.

The labels are kept in ``graph_state``, a dict ovmsx gives this node for one graph instance,
that is, for one stream. Two clients streaming at once each get their own labels. OVMS has no
such argument (it calls ``execute(inputs)``), so the parameter defaults to None and the code
falls back to ``self``, which OVMS shares between every stream of the graph.
"""

import struct

import numpy as np

from pyovms import Tensor


def unpack_strings(tensor) -> list[str]:
    """The elements of a KServe BYTES tensor (uint32 length + utf-8 bytes each)."""
    raw = bytes(tensor)
    items, offset = [], 0
    while offset < len(raw):
        (length,) = struct.unpack_from("<I", raw, offset)
        offset += 4
        if offset + length > len(raw):
            raise ValueError(f"{tensor.name}: element of {length} bytes runs past the data")
        items.append(raw[offset : offset + length].decode("utf-8"))
        offset += length
    return items


def pack_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<I", len(data)) + data


class OvmsPythonModel:
    def initialize(self, kwargs):
        self.shared_state = {}  # used only where the server passes no graph_state (OVMS)

    def execute(self, inputs, graph_state=None):
        state = self.shared_state if graph_state is None else graph_state
        # Inputs come sorted by tag (IMAGE before LABELS) and only those that arrived are
        # there; pick them by name, and take new labels before classifying an image.
        by_name = {tensor.name: tensor for tensor in inputs}
        if "labels" in by_name:
            state["labels"] = unpack_strings(by_name["labels"])
        if "image" not in by_name:
            return []  # labels alone: nothing to answer
        labels = state.get("labels")
        if not labels:
            raise ValueError("no labels yet: send labels before the first image")
        scores = np.asarray(by_name["image"]).reshape(-1)
        if scores.size != len(labels):
            raise ValueError(f"image has {scores.size} scores for {len(labels)} labels")
        label = labels[int(np.argmax(scores))]
        return [Tensor("result", pack_string(label), shape=(1,), datatype="BYTES")]
