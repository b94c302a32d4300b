"""A stand-in for a text generator: answers a prompt with its words in reverse order.

``execute`` is a generator function, so the node runs in generative mode: every ``yield``
sends one set of outputs down the graph, and the server streams each to the client at once.
Each word goes out as a Tensor ``token``; after the last word, a Tensor ``end`` holding the
number of tokens tells the client that generation is over (an "incomplete output": each
yield fills only one of the node's two outputs).
"""

import struct
import time

import numpy as np

from pyovms import Tensor

# Pause between tokens, so a client sees them arrive one by one, as from a real model.
TOKEN_DELAY_SECONDS = 0.05


def unpack_strings(tensor) -> list[bytes]:
    """The elements of a KServe BYTES tensor: each is a little-endian uint32 length, then
    that many bytes (the layout tritonclient's ``set_data_from_numpy`` sends)."""
    raw = bytes(tensor)
    items, offset = [], 0
    while offset < len(raw):
        (length,) = struct.unpack_from("<I", raw, offset)
        offset += 4
        if offset + length > len(raw):
            raise ValueError(f"{tensor.name}: element of {length} bytes runs past the data")
        items.append(raw[offset : offset + length])
        offset += length
    return items


def pack_string(text: str) -> bytes:
    """One BYTES element: the length prefix, then the utf-8 text."""
    data = text.encode("utf-8")
    return struct.pack("<I", len(data)) + data


class OvmsPythonModel:
    def execute(self, inputs):
        prompts = unpack_strings(inputs[0])
        if len(prompts) != 1:
            raise ValueError(f"expected one prompt, got {len(prompts)}")
        words = prompts[0].decode("utf-8").split()
        for word in reversed(words):
            time.sleep(TOKEN_DELAY_SECONDS)
            # The server sends a Python output as it is: its datatype, its shape and its bytes.
            # Labelled BYTES with shape (1,), the data must be one length-prefixed element.
            yield [Tensor("token", pack_string(word), shape=(1,), datatype="BYTES")]
        # INT32 rather than a numpy int64, which OVMS would label INT32 with 8-byte items.
        yield [Tensor("end", np.array([len(words)], dtype=np.int32))]
