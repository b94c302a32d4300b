"""A text embeddings model served on ``/v3/embeddings``, computed as OVMS computes it
(COMPAT_GENAI §2.5, §6): the folder's ``openvino_model.xml`` with pooling (CLS, MEAN or LAST)
and L2 normalisation appended to it, fed by openvino-genai's tokenizer of the same folder.

Requests from all clients go to one worker thread that infers the waiting requests together,
one inference's worth of rows at a time (batch_worker.py); each request still gets its own
length check and token count. Where OVMS differs from what its options say, ovmsx does what
they say (docs/genai.md): ``truncate: true`` cuts inputs to the model's length, and token ids
embed as the text they came from would (``token_type_ids`` zero for both).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ovmsx.genai.encoders.batch_worker import BatchWorker, Job
from ovmsx.genai.encoders.embeddings_request import EmbeddingsRequest, EmbeddingsRequestError
from ovmsx.genai.encoders.encoder_model import (
    ATTENTION_MASK,
    MAX_ROWS,
    EncoderLoadError,
    EncoderModel,
    EncoderTokenizer,
    compile_encoder,
    read_model,
)
from ovmsx.genai.model_folder import max_model_length, pooling_from_folder, special_tokens

POOLINGS = ("CLS", "LAST", "MEAN")
DEFAULT_MAX_LENGTH = 1024
NORMALIZE_EPS = 1e-12


@dataclass(frozen=True)
class EmbeddingsSettings:
    models_path: Path
    device: str
    plugin_config: dict
    normalize: bool
    pooling: str | None
    """None: as 1_Pooling/config.json says, else CLS."""
    truncate: bool
    max_length: int | None
    """None: config.json's, else 1024."""


@dataclass(frozen=True)
class Embedded:
    vectors: np.ndarray
    prompt_tokens: int


class EmbeddingsServable:
    def __init__(self, settings: EmbeddingsSettings, node: str) -> None:
        folder = settings.models_path
        self.tokenizer = EncoderTokenizer(folder)
        """The folder's tokenizer (``/v3/tokenize`` on this graph uses it too)."""
        tokens = special_tokens(folder, self.tokenizer.ids)
        self.max_length = settings.max_length or max_model_length(folder) or DEFAULT_MAX_LENGTH
        self.pooling = settings.pooling or pooling_from_folder(folder, node)
        self._truncate = settings.truncate
        self._vocab_size = self.tokenizer.vocab_size
        model = pooled_model(read_model(folder), self.pooling, settings.normalize)
        compiled = compile_encoder(model, settings.device, settings.plugin_config)
        self._model = EncoderModel(compiled, tokens.pad or 0)
        self._worker = BatchWorker(
            f"embeddings-{node}", self._run, lambda request: request.count, MAX_ROWS
        )

    async def embed(self, request: EmbeddingsRequest) -> Embedded:
        return await self._worker.submit(request)

    def close(self) -> None:
        self._worker.close()

    # -- the worker thread -------------------------------------------------------------------

    def _run(self, jobs: list[Job]) -> None:
        texts = [text for job in jobs if job.work.texts is not None for text in job.work.texts]
        tokenized = iter(self._tokenize(texts)) if texts else iter(())
        rows: list = []  # token id lists and arrays
        accepted: list[tuple[Job, int, int, int]] = []  # job, first row, rows, tokens
        for job in jobs:
            request: EmbeddingsRequest = job.work
            if request.texts is not None:
                own = [next(tokenized) for _ in request.texts]
            else:
                own = [self._truncated(ids) for ids in request.token_ids or ()]
            error = self._check(own, request.texts is None)
            if error is not None:
                job.fail(EmbeddingsRequestError(error))
                continue
            accepted.append((job, len(rows), len(own), sum(len(row) for row in own)))
            rows.extend(own)
        if not rows:
            return
        vectors = self._model.infer(rows, _first_output)
        for job, first, count, tokens in accepted:
            job.answer(Embedded(vectors[first : first + count], tokens))

    def _tokenize(self, texts: list[str]) -> list[np.ndarray]:
        options = {"max_length": self.max_length, "truncation": True} if self._truncate else {}
        return self.tokenizer.rows(texts, add_special_tokens=True, **options)

    def _truncated(self, ids: list[int]) -> list[int]:
        return ids[: self.max_length] if self._truncate else ids

    def _check(self, rows: list, token_ids: bool) -> str | None:
        width = max(len(row) for row in rows)
        if width > self.max_length:
            return f"Input length {width} longer than allowed {self.max_length}"
        if token_ids:
            for row in rows:
                ids = np.asarray(row)
                outside = ids[(ids < 0) | (ids >= self._vocab_size)]
                if outside.size:
                    return (
                        f"token id {outside[0]} is outside the model's vocabulary "
                        f"[0, {self._vocab_size})"
                    )
        return None


def _first_output(request) -> np.ndarray:
    return request.get_output_tensor(0).data.copy()


def pooled_model(model, pooling: str, normalize: bool):
    """``model`` with the pooling of its token states and (optionally) L2 normalisation appended:
    one output, ``[batch, hidden]`` float32."""
    import openvino as ov
    from openvino import opset13 as ops

    hidden = _hidden_states(model)
    if hidden.get_element_type() != ov.Type.f32:
        hidden = ops.convert(hidden, ov.Type.f32).output(0)
    mask = next(port for port in model.inputs if ATTENTION_MASK in port.get_names())
    if pooling == "CLS":
        pooled = ops.gather(hidden, ops.constant(np.int64(0)), ops.constant(np.int64(1)))
    elif pooling == "MEAN":
        weights = ops.unsqueeze(ops.convert(mask, ov.Type.f32), ops.constant(np.int64(2)))
        total = ops.reduce_sum(ops.multiply(hidden, weights), ops.constant(np.int64(1)), False)
        count = ops.reduce_sum(weights, ops.constant(np.int64(1)), False)
        pooled = ops.divide(total, ops.maximum(count, ops.constant(np.float32(1e-9))))
    elif pooling == "LAST":
        lengths = ops.reduce_sum(ops.convert(mask, ov.Type.i64), ops.constant(np.int64(1)), True)
        last = ops.subtract(lengths, ops.constant(np.int64(1)))
        gathered = ops.gather(hidden, last, ops.constant(np.int64(1)), batch_dims=1)
        pooled = ops.squeeze(gathered, ops.constant(np.int64(1)))
    else:
        raise EncoderLoadError(f"pooling {pooling} is none of {', '.join(POOLINGS)}")
    if normalize:
        pooled = ops.normalize_l2(pooled, ops.constant(np.int64(1)), NORMALIZE_EPS, "max")
    result = ops.result(pooled)
    result.output(0).get_tensor().set_names({"embeddings"})
    return ov.Model([result], model.get_parameters(), f"{model.get_friendly_name()}_pooled")


def _hidden_states(model):
    """The token states: with several outputs, the first of rank 3 (GTE-style models);
    otherwise the only output."""
    outputs = list(model.outputs)
    if len(outputs) == 1:
        chosen = outputs[0]
    else:
        chosen = next((port for port in outputs if port.get_partial_shape().rank == 3), None)
        if chosen is None:
            raise EncoderLoadError("the model has several outputs and none of rank 3")
    if chosen.get_partial_shape().rank != 3:
        raise EncoderLoadError(
            f"the model's output {chosen.get_any_name()} is not [batch, tokens, hidden]"
        )
    # What feeds the model's Result: the new head replaces the Result, not follows it.
    return chosen.get_node().input_value(0)
