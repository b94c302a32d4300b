"""What a generative-AI model folder says about itself beyond its OpenVINO files, read as OVMS
reads it (COMPAT_GENAI §2.4, §2.5): the context length in ``config.json``, the special token
ids of an encoder (``config.json``, then ``tokenizer_config.json``), and the pooling that
``1_Pooling/config.json`` asks for.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("ovmsx.embeddings_calculator")

# config.json fields holding the model's context length, the first unsigned one wins.
_LENGTH_FIELDS = (
    "max_position_embeddings",
    "n_positions",
    "seq_len",
    "seq_length",
    "n_ctx",
    "sliding_window",
)
# sentence-transformers' pooling flags, and the pooling OVMS picks for each it supports.
_POOLING_FLAGS = {
    "pooling_mode_cls_token": "CLS",
    "pooling_mode_mean_tokens": "MEAN",
    "pooling_mode_lasttoken": "LAST",
}
_UNSUPPORTED_POOLING_FLAGS = (
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
)


def read_json_object(path: Path) -> dict:
    """The JSON object in ``path``; empty when the file is missing, unreadable or no object."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def max_model_length(folder: Path) -> int | None:
    """The context length ``config.json`` gives (OVMS's ``parseMaxModelLength``), or None."""
    config = read_json_object(folder / "config.json")
    for name in _LENGTH_FIELDS:
        value = config.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


@dataclass(frozen=True)
class SpecialTokens:
    pad: int | None
    bos: int | None
    eos: int | None
    sep: int | None


def special_tokens(folder: Path, encode) -> SpecialTokens:
    """An encoder's special token ids: non-zero ids from ``config.json``, else the token strings
    of ``tokenizer_config.json`` encoded by ``encode`` (text -> list of ids) when they make
    exactly one token; ``sep`` falls back to ``eos``."""
    config = read_json_object(folder / "config.json")
    strings = read_json_object(folder / "tokenizer_config.json")

    def pick(name: str, zero_allowed: bool = False) -> int | None:
        value = config.get(f"{name}_token_id")
        if isinstance(value, int) and not isinstance(value, bool) and (value or zero_allowed):
            return value
        text = strings.get(f"{name}_token")
        if isinstance(text, dict):  # an AddedToken written out: {"content": "[SEP]", ...}
            text = text.get("content")
        if isinstance(text, str) and text:
            ids = encode(text)
            if len(ids) == 1:
                return int(ids[0])
        return None

    eos = pick("eos")
    sep = pick("sep", zero_allowed=True)
    return SpecialTokens(pad=pick("pad"), bos=pick("bos"), eos=eos, sep=eos if sep is None else sep)


def pooling_from_folder(folder: Path, node: str) -> str:
    """The pooling ``1_Pooling/config.json`` names (CLS, MEAN or LAST); CLS, with a warning, when
    it names none, several, or one OVMS does not support."""
    config = read_json_object(folder / "1_Pooling" / "config.json")
    chosen = [mode for flag, mode in _POOLING_FLAGS.items() if config.get(flag) is True]
    unsupported = [flag for flag in _UNSUPPORTED_POOLING_FLAGS if config.get(flag) is True]
    if len(chosen) == 1 and not unsupported:
        return chosen[0]
    if unsupported or len(chosen) > 1:
        log.warning(
            "node %s: 1_Pooling/config.json asks for %s; ovmsx pools with CLS",
            node,
            ", ".join(unsupported + [f"pooling_mode_{mode.lower()}" for mode in chosen[1:]]),
        )
    else:
        log.warning("node %s: neither the graph nor 1_Pooling/config.json sets pooling: CLS", node)
    return "CLS"
