"""A cross-encoder served on ``/v3/rerank``, scored as OVMS scores it (COMPAT_GENAI §2.5, §7).

Each document is paired with the query in one row, ``BOS query EOS SEP document EOS``, the
special tokens placed here (the tokenizer adds none); the query keeps at most half the model's
length, and a document longer than what is left is cut into chunks that each get a row. A
document scores ``sigmoid`` of its row's logit (the second column of a two-column head), the
best over its chunks. A tokenizer whose ``tokenizer_config.json`` says ``add_bos_token: false``
(decoder rerankers) gets one row of ``query + document`` tokenized as text instead, never
chunked, as OVMS means to do for such models.

Requests from all clients share one worker that infers the waiting rows together, one
inference's worth at a time (batch_worker.py), as for embeddings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ovmsx.genai.encoders.batch_worker import BatchWorker, Job
from ovmsx.genai.encoders.encoder_model import (
    MAX_ROWS,
    EncoderLoadError,
    EncoderModel,
    EncoderTokenizer,
    compile_encoder,
    read_model,
)
from ovmsx.genai.encoders.rerank_request import RerankRequest
from ovmsx.genai.model_folder import max_model_length, read_json_object, special_tokens

DEFAULT_MAX_LENGTH = 512
SPECIAL_TOKENS_PER_ROW = 4
LOGITS = "logits"


class RerankInputError(ValueError):
    """Documents the model cannot take (OVMS answers these as INTERNAL errors)."""


@dataclass(frozen=True)
class RerankSettings:
    models_path: Path
    device: str
    plugin_config: dict
    max_allowed_chunks: int
    max_length: int | None
    """None: config.json's, else 512."""


class RerankServable:
    def __init__(self, settings: RerankSettings, node: str) -> None:
        folder = settings.models_path
        self.tokenizer = EncoderTokenizer(folder)
        """The folder's tokenizer (``/v3/tokenize`` on this graph uses it too)."""
        self.max_length = settings.max_length or max_model_length(folder) or DEFAULT_MAX_LENGTH
        if self.max_length <= 2 * SPECIAL_TOKENS_PER_ROW:
            raise EncoderLoadError(
                "max_position_embeddings should be larger than 2 * NUMBER_OF_SPECIAL_TOKENS"
            )
        tokens = special_tokens(folder, self.tokenizer.ids)
        self._bos, self._eos, self._sep = tokens.bos or 0, tokens.eos or 0, tokens.sep or 0
        self._max_chunks = settings.max_allowed_chunks
        self.concatenated = (
            read_json_object(folder / "tokenizer_config.json").get("add_bos_token") is False
        )
        model = read_model(folder)
        if not any(LOGITS in port.get_names() for port in model.outputs):
            raise EncoderLoadError(f"the model has no output named {LOGITS}")
        compiled = compile_encoder(model, settings.device, settings.plugin_config)
        self._model = EncoderModel(compiled, tokens.pad or 0)
        # A document is a row, unless it is chunked.
        self._worker = BatchWorker(
            f"rerank-{node}", self._run, lambda request: len(request.texts), MAX_ROWS
        )

    async def rerank(self, request: RerankRequest) -> np.ndarray:
        """Each document's score, in the request's order."""
        if not request.texts:
            return np.zeros(0, dtype=np.float32)
        return await self._worker.submit(request)

    def close(self) -> None:
        self._worker.close()

    # -- the worker thread -------------------------------------------------------------------

    def _run(self, jobs: list[Job]) -> None:
        rows: list[np.ndarray] = []
        owners: list[np.ndarray] = []  # per accepted job: the document of each of its rows
        accepted: list[tuple[Job, int]] = []
        for job in jobs:
            try:
                own, documents = self._rows(job.work)
            except RerankInputError as error:
                job.fail(error)
                continue
            accepted.append((job, len(rows)))
            rows.extend(own)
            owners.append(documents)
        if not rows:
            return
        logits = self._model.infer(rows, _logits)
        column = logits[:, 1] if logits.shape[1] > 1 else logits[:, 0]
        scores = 1.0 / (1.0 + np.exp(-column.astype(np.float32)))
        for (job, first), documents in zip(accepted, owners, strict=True):
            best = np.zeros(len(job.work.texts), dtype=np.float32)
            np.maximum.at(best, documents, scores[first : first + len(documents)])
            job.answer(best)

    def _rows(self, request: RerankRequest) -> tuple[list[np.ndarray], np.ndarray]:
        """The request's rows, and for each the index of its document."""
        if len(request.texts) > self._max_chunks:
            raise RerankInputError("Number of documents exceeds max_allowed_chunks")
        if self.concatenated:
            return self._concatenated_rows(request)
        query = self.tokenizer.ids(request.query)[: self.max_length // 2]
        room = self.max_length - len(query) - SPECIAL_TOKENS_PER_ROW
        if room <= 0:
            raise RerankInputError("Chunking failed: no space left for chunks")
        documents = self.tokenizer.rows(request.texts, add_special_tokens=False)
        chunks: list[np.ndarray] = []
        owners: list[int] = []
        for index, ids in enumerate(documents):
            # An empty document still gets its row.
            pieces = [ids[start : start + room] for start in range(0, max(1, len(ids)), room)]
            chunks.extend(pieces)
            owners.extend([index] * len(pieces))
        if len(chunks) > self._max_chunks:
            raise RerankInputError(
                "Chunking failed: exceeding max_allowed_chunks after chunking limit: "
                f"{self._max_chunks}; actual: {len(chunks)}"
            )
        head = np.array([self._bos, *query, self._eos, self._sep], dtype=np.int64)
        tail = np.array([self._eos], dtype=np.int64)
        rows = [np.concatenate((head, chunk, tail)) for chunk in chunks]
        return rows, np.asarray(owners, dtype=np.int64)

    def _concatenated_rows(self, request: RerankRequest) -> tuple[list[np.ndarray], np.ndarray]:
        texts = [request.query + text for text in request.texts]
        rows = self.tokenizer.rows(texts, add_special_tokens=True)
        longest = max(len(row) for row in rows)
        if longest > self.max_length:
            raise RerankInputError(
                f"The requests length of {longest} tokens exceeds the model context of "
                f"{self.max_length}"
            )
        return rows, np.arange(len(rows), dtype=np.int64)


def _logits(request) -> np.ndarray:
    found = request.get_tensor(LOGITS).data
    if found.ndim != 2:
        raise RuntimeError("Logits should be 2D tensor")
    return found.copy()
