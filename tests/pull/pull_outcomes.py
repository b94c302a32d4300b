"""What the pull tests share besides fixtures: model config.json contents for the hub's
repositories, and the outcome of running a pull or config-management command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

LLM_CONFIG = json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}).encode()
EMBEDDINGS_CONFIG = json.dumps({"architectures": ["BertModel"], "model_type": "bert"}).encode()


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


Run = Callable[..., Outcome]
