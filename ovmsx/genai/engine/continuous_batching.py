"""openvino-genai's ContinuousBatchingPipeline built from an LLM node's settings: the scheduler
(OVMS's options map onto SchedulerConfig one to one, cache eviction and sparse attention
included), a draft model for speculative decoding, prompt lookup, OpenVINO properties."""

from __future__ import annotations

from ovmsx.genai.engine.engine_settings import EngineSettings


def continuous_batching_pipeline(genai, settings: EngineSettings):
    """``genai``: the openvino_genai module (imported by the engine process only)."""
    scheduler = genai.SchedulerConfig()
    scheduler.max_num_batched_tokens = settings.max_num_batched_tokens
    scheduler.cache_size = settings.cache_size
    scheduler.max_num_seqs = settings.max_num_seqs
    scheduler.dynamic_split_fuse = settings.dynamic_split_fuse
    scheduler.enable_prefix_caching = settings.enable_prefix_caching
    if settings.cache_interval_multiplier is not None:
        scheduler.cache_interval_multiplier = settings.cache_interval_multiplier
    if settings.cache_eviction is not None:
        scheduler.use_cache_eviction = True
        scheduler.cache_eviction_config = _eviction_config(genai, settings.cache_eviction)
    if settings.sparse_attention is not None:
        scheduler.use_sparse_attention = True
        found = dict(settings.sparse_attention)
        found["mode"] = genai.SparseAttentionMode.__members__[found["mode"]]
        scheduler.sparse_attention_config = genai.SparseAttentionConfig(**found)
    properties = dict(settings.plugin_config)
    if settings.draft is not None:
        draft = dict(settings.draft)
        draft_scheduler = genai.SchedulerConfig()
        for name in ("max_num_batched_tokens", "cache_size", "max_num_seqs"):
            setattr(draft_scheduler, name, draft.pop(name))
        draft_scheduler.dynamic_split_fuse = draft.pop("dynamic_split_fuse")
        properties["draft_model"] = genai.draft_model(
            draft["models_path"], draft["device"], scheduler_config=draft_scheduler
        )
    if settings.prompt_lookup:
        properties["prompt_lookup"] = True
    return genai.ContinuousBatchingPipeline(
        settings.models_path, scheduler, settings.device, properties
    )


def _eviction_config(genai, found: dict):
    found = dict(found)
    crush = found.pop("kvcrush", None)
    mode = genai.AggregationMode.__members__[found.pop("aggregation_mode")]
    if crush is not None:
        anchor = genai.KVCrushAnchorPointMode.__members__[crush["anchor_point_mode"]]
        found["kvcrush_config"] = genai.KVCrushConfig(crush["budget"], anchor, crush["rng_seed"])
    return genai.CacheEvictionConfig(aggregation_mode=mode, **found)
