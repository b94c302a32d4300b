"""What an engine process needs to build its openvino-genai pipeline, as the server sends it
(picklable): every task's engine reads one of these, whichever node options it came from."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class EngineSettings:
    """Everything the engine process needs to build its pipeline (picklable)."""

    models_path: str
    """The folder, or the .gguf file."""
    pipeline: str = "LM_CB"
    """LM_CB (ContinuousBatchingPipeline) or LM (the stateful LLMPipeline)."""
    device: str = "CPU"
    plugin_config: dict = field(default_factory=dict)
    max_num_batched_tokens: int = 256
    cache_size: int = 0
    max_num_seqs: int = 256
    dynamic_split_fuse: bool = True
    enable_prefix_caching: bool = False
    cache_interval_multiplier: int | None = None
    cache_eviction: dict | None = None
    """``cache_eviction_config`` as keyword arguments (enum values by name); None: off."""
    sparse_attention: dict | None = None
    """``sparse_attention_config`` likewise; None: off."""
    draft: dict | None = None
    """Speculative decoding: the draft model's ``models_path`` and ``device`` and its scheduler
    settings (the main model's where the graph sets none); None: off."""
    prompt_lookup: bool = False
    """``plugin_config``'s ``prompt_lookup``: prompt-lookup decoding."""
    log_level: str = "INFO"
    """The server's ``--log_level``; the engine process logs to the same places."""
    log_path: str | None = None
