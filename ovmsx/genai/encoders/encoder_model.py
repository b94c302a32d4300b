"""An encoder's OpenVINO model compiled for serving: the inputs it takes (``input_ids``,
``attention_mask``, maybe ``token_type_ids``) and one inference over a padded batch of rows.

Rows come as lists of token ids of any lengths. They are sorted by length and inferred in
slices of at most ``MAX_ROWS``, each slice padded only to its own longest row: a long document
beside short ones costs its own padding, not theirs, and no request makes one huge tensor.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ovmsx.genai.openai.tokenize_request import tokenize_rows

MAX_ROWS = 32
INPUT_IDS = "input_ids"
ATTENTION_MASK = "attention_mask"
TOKEN_TYPE_IDS = "token_type_ids"


class EncoderLoadError(RuntimeError):
    """The model cannot be served (wrong inputs, no output to use, refused by OpenVINO)."""


def compile_encoder(model, device: str, plugin_config: dict):
    """``model`` (an ``openvino.Model``) compiled; OpenVINO's errors become EncoderLoadError."""
    import openvino as ov

    names = {name for port in model.inputs for name in port.get_names()}
    missing = [name for name in (INPUT_IDS, ATTENTION_MASK) if name not in names]
    if missing:
        raise EncoderLoadError(f"the model has no {' or '.join(missing)} input")
    properties = {
        key: value if isinstance(value, str) else json.dumps(value)
        for key, value in plugin_config.items()
    }
    try:
        with OPENVINO_PYTHON:
            return ov.Core().compile_model(model, device, properties)
    except RuntimeError as error:
        raise EncoderLoadError(f"OpenVINO cannot compile it for {device}: {error}") from None


# Graphs load in parallel threads, and servers froze at start when two of them made openvino's
# Python module hand out a numpy array for the first time at once: pybind11's one-time numpy
# setup waited for the GIL for ever. That setup is done once, at import (below), and every call
# into openvino and openvino-genai from the encoders takes this lock, one thread at a time
# (tokenizer calls keep the GIL anyway). Inference releases the GIL and runs outside it.
OPENVINO_PYTHON = threading.Lock()


class EncoderTokenizer:
    """openvino-genai's tokenizer of a folder, called one thread at a time."""

    def __init__(self, folder: Path) -> None:
        with OPENVINO_PYTHON:
            import openvino_genai as genai

            try:
                self._tokenizer = genai.Tokenizer(str(folder))
            except RuntimeError as error:
                raise EncoderLoadError(
                    f"openvino-genai cannot load its tokenizer: {error}"
                ) from None
            self.vocab_size = len(self._tokenizer.get_vocab())

    def ids(self, text: str) -> list[int]:
        """The text's token ids, without special tokens."""
        with OPENVINO_PYTHON:
            encoded = self._tokenizer.encode(text, add_special_tokens=False)
        return encoded.input_ids.data[0].tolist()

    def rows(self, texts: list[str], **options) -> list[np.ndarray]:
        """Each text's token ids (padding dropped, whichever side the tokenizer pads), as the
        arrays EncoderModel copies into its batch."""
        with OPENVINO_PYTHON:
            encoded = self._tokenizer.encode(texts, **options)
        ids = encoded.input_ids.data
        mask = encoded.attention_mask.data.astype(bool)
        return [ids[row][mask[row]] for row in range(len(texts))]

    def tokenize(self, request) -> list[list[int]]:
        """``POST /v3/tokenize`` on an encoder graph (tokenize_request.tokenize_rows)."""
        with OPENVINO_PYTHON:
            return tokenize_rows(self._tokenizer, request)


def read_model(folder: Path):
    import openvino as ov

    path = folder / "openvino_model.xml"
    if not path.is_file():
        raise EncoderLoadError(f"{path} does not exist")
    try:
        with OPENVINO_PYTHON:
            return ov.Core().read_model(path)
    except RuntimeError as error:
        raise EncoderLoadError(f"OpenVINO cannot read {path}: {error}") from None


class EncoderModel:
    """Inference over rows of token ids (lists or arrays), in length-sorted slices."""

    def __init__(self, compiled, pad_id: int) -> None:
        self._request = compiled.create_infer_request()
        self._pad_id = pad_id
        self._types = {}
        for port in compiled.inputs:
            for name in port.get_names():
                self._types[name] = port.get_element_type().to_dtype()
        self._with_type_ids = TOKEN_TYPE_IDS in self._types

    def infer(self, rows: Sequence[Sequence[int] | np.ndarray], output: Callable) -> np.ndarray:
        """``output(request)``: the slice's result from the finished infer request, one row per
        input row; returns the results of all rows, in the order given."""
        order = sorted(range(len(rows)), key=lambda index: len(rows[index]))
        results: list[np.ndarray | None] = [None] * len(rows)
        for start in range(0, len(order), MAX_ROWS):
            picked = order[start : start + MAX_ROWS]
            width = max(len(rows[index]) for index in picked)
            ids = np.full((len(picked), width), self._pad_id, dtype=self._types[INPUT_IDS])
            mask = np.zeros((len(picked), width), dtype=self._types[ATTENTION_MASK])
            for line, index in enumerate(picked):
                row = rows[index]
                ids[line, : len(row)] = row
                mask[line, : len(row)] = 1
            inputs = {INPUT_IDS: ids, ATTENTION_MASK: mask}
            if self._with_type_ids:
                inputs[TOKEN_TYPE_IDS] = np.zeros_like(ids, dtype=self._types[TOKEN_TYPE_IDS])
            self._request.infer(inputs)
            found = output(self._request)
            for line, index in enumerate(picked):
                results[index] = found[line]
        return np.stack(results)


def _warm_numpy_bridge() -> None:
    """openvino's numpy support set up now, on the importing thread (see OPENVINO_PYTHON)."""
    import openvino as ov

    with OPENVINO_PYTHON:
        ov.Tensor(np.zeros(1, np.int64)).data  # noqa: B018


_warm_numpy_bridge()
