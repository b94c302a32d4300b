"""Structured output checked before the real pipeline sees it.

openvino-genai compiles a request's grammar (a JSON schema, a structural tag) inside
``step()``, and a grammar it cannot compile makes that step throw, which breaks a continuous-
batching pipeline for good: every request in it fails, and the next steps too. So each
request's structured-output settings first go through a probe: a pipeline over a one-layer,
all-zero decoder with the real tokenizer (the grammar depends on the vocabulary only), built in
a tenth of a second, which generates one token under that grammar. A grammar the probe cannot
compile is refused with the compiler's message, and the probe, broken in turn, is rebuilt.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ovmsx.genai.genai_errors import genai_message

# Small enough to cost nothing, large enough for a one-token prompt and its answer.
_HIDDEN = 8
FOLDER_PREFIX = "ovmsx-grammar-probe-"
_BLOCKS = 16


def _probe_model(vocab: int):
    """A stateful decoder openvino-genai turns into its paged-attention form: input_ids,
    attention_mask, position_ids and beam_idx in, logits of ``vocab`` out, one layer whose KV
    cache lives in ReadValue/Assign state. Every weight is zero: only its shape matters."""
    import openvino as ov
    from openvino import opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    def parameter(name: str, shape: list[int], kind):
        node = ops.parameter(shape, kind)
        node.output(0).get_tensor().set_names({name})
        node.set_friendly_name(name)
        return node

    ids = parameter("input_ids", [-1, -1], ov.Type.i64)
    mask = parameter("attention_mask", [-1, -1], ov.Type.i64)
    positions = parameter("position_ids", [-1, -1], ov.Type.i64)
    beam = parameter("beam_idx", [-1], ov.Type.i32)
    zeros = ops.constant(np.zeros((vocab, _HIDDEN), np.float32))
    x = ops.add(ops.gather(zeros, ids, 0), ops.unsqueeze(ops.convert(positions, ov.Type.f32), 2))
    batch = ops.gather(ops.shape_of(ids), ops.constant([0]), 0)
    empty = ops.concat([batch, ops.constant([1, 0, _HIDDEN], dtype=np.int64)], 0)
    # Causal attention over past and current tokens, padding masked: [B, 1, T, S].
    total = ops.gather(ops.shape_of(mask), ops.constant(1), 0)
    current = ops.gather(ops.shape_of(ids), ops.constant(1), 0)
    rows = ops.add(ops.range(0, current, 1, output_type="i64"), ops.subtract(total, current))
    causal = ops.greater_equal(
        ops.unsqueeze(rows, 1), ops.unsqueeze(ops.range(0, total, 1, output_type="i64"), 0)
    )
    kept = ops.not_equal(ops.unsqueeze(mask, [1, 2]), ops.constant(0, np.int64))
    allowed = ops.logical_and(ops.unsqueeze(causal, [0, 1]), kept)
    bias = ops.select(allowed, ops.constant(0.0, np.float32), ops.constant(-1e9, np.float32))
    query = ops.unsqueeze(x, ops.constant(1))
    sinks, cache = [], {}
    for kind in ("key", "value"):
        info = VariableInfo()
        info.data_shape = ov.PartialShape([-1, 1, -1, _HIDDEN])
        info.data_type = ov.Type.f32
        info.variable_id = f"past_key_values.0.{kind}present.0.{kind}"
        variable = Variable(info)
        past = ops.read_value(ops.broadcast(ops.constant(0.0, np.float32), empty), variable)
        full = ops.concat([ops.gather(past, beam, 0), query], 2)
        sinks.append(ops.assign(full, variable))
        cache[kind] = full
    attended = ops.scaled_dot_product_attention(
        query, cache["key"], cache["value"], bias, causal=False
    )
    hidden = ops.squeeze(attended, ops.constant(1))
    logits = ops.matmul(hidden, ops.constant(np.zeros((_HIDDEN, vocab), np.float32)), False, False)
    result = ops.result(logits)
    result.output(0).get_tensor().set_names({"logits"})
    return ov.Model([result], sinks, [ids, mask, positions, beam], "grammar_probe")


class GrammarProbe:
    def __init__(self, genai, tokenizer, folder: str | None = None) -> None:
        """``folder``: where the probe's model is written, which the caller removes (a
        process that may be killed cannot); by default a temporary folder of its own."""
        import openvino as ov

        self._genai = genai
        self._tokenizer = tokenizer
        self._own = None if folder else tempfile.TemporaryDirectory(prefix=FOLDER_PREFIX)
        self._folder = folder or self._own.name
        vocab = len(tokenizer.get_vocab())
        ov.save_model(_probe_model(vocab), Path(self._folder) / "openvino_model.xml")
        self._prompt = tokenizer.encode("{", add_special_tokens=False).input_ids
        self._pipeline = self._build()
        self._next_id = 0

    def _build(self):
        scheduler = self._genai.SchedulerConfig()
        scheduler.num_kv_blocks = _BLOCKS
        scheduler.max_num_batched_tokens = 64
        return self._genai.ContinuousBatchingPipeline(
            self._folder, self._tokenizer, scheduler, "CPU"
        )

    def problem(self, structured_output) -> str | None:
        """Why openvino-genai cannot generate under ``structured_output`` (a
        ``StructuredOutputConfig``), or None when it can."""
        config = self._genai.GenerationConfig()
        config.max_new_tokens = 1
        config.structured_output_config = structured_output
        self._next_id += 1
        try:
            # Held until the step: a dropped handle cancels its request.
            handle = self._pipeline.add_request(self._next_id, self._prompt, config)
            while self._pipeline.has_non_finished_requests():
                self._pipeline.step()
            del handle
        except RuntimeError as error:
            self._pipeline = self._build()
            return genai_message(error)
        return None
