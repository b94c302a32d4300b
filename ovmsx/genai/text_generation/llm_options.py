"""An ``HttpLLMCalculator`` node's ``LLMCalculatorOptions``, read into what ovmsx's engine and
request checks use, with OVMS's defaults and load errors.

Fields ovmsx cannot honour yet are refused by name at load, never dropped silently: EAGLE3 drafts
and the MINJA template mode (ovmsx renders templates with jinja2 only). The tool and reasoning
parsers, and tool-guided generation, are llm_parsers.py's. A draft model (``draft_models_path`` and
its ``draft_*`` scheduler settings, which default to the main model's) turns on speculative
decoding, and ``plugin_config``'s ``prompt_lookup`` prompt-lookup decoding. Cache eviction and
sparse attention go to openvino-genai's scheduler as given (fields left unset keep its
defaults).
"""

from __future__ import annotations

from pathlib import Path

from ovmsx.genai.engine.engine_settings import EngineSettings
from ovmsx.genai.node_options import parse_plugin_config, resolve_models_path
from ovmsx.genai.openai.openai_request import RequestLimits
from ovmsx.status import StatusCode, status_error

_DRAFT_FIELDS = (
    "draft_models_path",
    "draft_device",
    "draft_max_num_batched_tokens",
    "draft_cache_size",
    "draft_block_size",
    "draft_max_num_seqs",
    "draft_dynamic_split_fuse",
    "draft_eagle3_mode",
)
# OVMS's pipeline types (LLMCalculatorOptions.PipelineType).
LM, VLM, LM_CB, VLM_CB, OMNI, AUTO = range(6)
PIPELINE_NAMES = {
    LM: "LM",
    VLM: "VLM",
    LM_CB: "LM_CB",
    VLM_CB: "VLM_CB",
    OMNI: "OMNI",
    AUTO: "AUTO",
}
MINJA = 0
# Files whose presence makes a folder a vision-language (or omni) model, as OVMS decides.
_VLM_FILES = ("openvino_text_embeddings_model.xml", "openvino_vision_embeddings_model.bin")
_OMNI_FILE = "openvino_talker_model.xml"


def read_options(options, base_dir: Path, node: str) -> tuple[EngineSettings, RequestLimits]:
    """``options``: an ``LLMCalculatorOptions`` message; ``base_dir``: the graph's folder."""
    _refuse_unhonoured(options, node)
    path = resolve_models_path(options.models_path, base_dir, node)
    plugin_config = parse_plugin_config(options.plugin_config, node)
    prompt_lookup = bool(plugin_config.pop("prompt_lookup", False))
    pipeline = _pipeline(options, path, node)
    settings = EngineSettings(
        models_path=str(path),
        pipeline=pipeline,
        device=options.device or "CPU",
        plugin_config=plugin_config,
        max_num_batched_tokens=options.max_num_batched_tokens,
        cache_size=options.cache_size,
        max_num_seqs=options.max_num_seqs,
        dynamic_split_fuse=options.dynamic_split_fuse,
        enable_prefix_caching=options.enable_prefix_caching,
        cache_interval_multiplier=(
            options.cache_interval_multiplier
            if options.HasField("cache_interval_multiplier")
            else None
        ),
        cache_eviction=_eviction(options),
        sparse_attention=_sparse_attention(options),
        draft=_draft(options, base_dir, node),
        prompt_lookup=prompt_lookup,
    )
    limits = RequestLimits(
        best_of_limit=options.best_of_limit,
        max_tokens_limit=(
            options.max_tokens_limit if options.HasField("max_tokens_limit") else None
        ),
    )
    return settings, limits


def _draft(options, base_dir: Path, node: str) -> dict | None:
    if not options.HasField("draft_models_path"):
        return None

    def draft_or_main(name: str):
        draft = f"draft_{name}"
        return getattr(options, draft if options.HasField(draft) else name)

    return {
        "models_path": str(
            resolve_models_path(options.draft_models_path, base_dir, node, "draft_models_path")
        ),
        "device": options.draft_device or options.device or "CPU",
        "max_num_batched_tokens": draft_or_main("max_num_batched_tokens"),
        "cache_size": draft_or_main("cache_size"),
        "max_num_seqs": draft_or_main("max_num_seqs"),
        "dynamic_split_fuse": draft_or_main("dynamic_split_fuse"),
    }


def _eviction(options) -> dict | None:
    if not options.HasField("cache_eviction_config"):
        return None
    config = options.cache_eviction_config
    kinds = type(config)
    found = {
        "start_size": config.start_size,
        "recent_size": config.recent_size,
        "max_cache_size": config.max_cache_size,
        "aggregation_mode": kinds.AggregationMode.Name(config.aggregation_mode),
        "apply_rotation": config.apply_rotation,
        "snapkv_window_size": config.snapkv_window_size,
    }
    if config.HasField("kv_crush_config"):
        crush = config.kv_crush_config
        found["kvcrush"] = {
            "budget": crush.budget,
            "anchor_point_mode": type(crush).AnchorPointMode.Name(crush.anchor_point_mode),
            "rng_seed": crush.rng_seed,
        }
    return found


def _sparse_attention(options) -> dict | None:
    if not options.HasField("sparse_attention_config"):
        return None
    config = options.sparse_attention_config
    found: dict = {"mode": type(config).SparseAttentionMode.Name(config.mode)}
    for described in config.DESCRIPTOR.fields:
        if described.name != "mode" and config.HasField(described.name):
            found[described.name] = getattr(config, described.name)
    return found


def _refuse_unhonoured(options, node: str) -> None:
    named = [name for name in _DRAFT_FIELDS if options.HasField(name)]
    if named and not options.HasField("draft_models_path"):
        raise status_error(
            StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED,
            f"node {node}: {', '.join(named)} set without draft_models_path",
        )
    if options.draft_eagle3_mode:
        raise _not_supported(node, "draft_eagle3_mode", "EAGLE3 speculative decoding")
    if options.HasField("chat_template_mode") and options.chat_template_mode == MINJA:
        raise _not_supported(node, "chat_template_mode: MINJA", "the MINJA template renderer")


def _not_supported(node: str, names: str, what: str):
    return status_error(
        StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED,
        f"node {node}: {names}: ovmsx does not serve {what} yet; remove the option to serve "
        "the model without it",
    )


def _pipeline(options, path: Path, node: str) -> str:
    """The pipeline type, as OVMS decides it from the folder (servable_initializer.cpp): a
    folder with both vision files is a VLM (an omni model with the talker too); AUTO takes the
    folder's kind (the stateful LM or legacy VLM on NPU), and an explicit type that contradicts
    it is OVMS's internal error."""
    folder = path if path.is_dir() else path.parent
    vision = all((folder / name).exists() for name in _VLM_FILES)
    omni = vision and (folder / _OMNI_FILE).exists()
    wanted = options.pipeline_type
    if wanted == AUTO:
        if omni:
            wanted = OMNI
        elif vision:
            wanted = VLM if options.device == "NPU" else VLM_CB
        else:
            wanted = LM if (options.device or "").upper() == "NPU" else LM_CB
    elif vision and wanted in (LM, LM_CB):
        raise status_error(
            StatusCode.INTERNAL_ERROR,
            f"node {node}: Models directory content indicates VLM pipeline, but pipeline type "
            "is set to non-VLM type.",
        )
    elif not vision and wanted in (VLM, VLM_CB):
        raise status_error(
            StatusCode.INTERNAL_ERROR,
            f"node {node}: Models directory content indicates non-VLM pipeline, but pipeline "
            "type is set to VLM type.",
        )
    if wanted in (VLM, VLM_CB) and options.HasField("draft_models_path"):
        raise status_error(
            StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED,
            f"node {node}: a draft model (draft_models_path) is not served with a "
            "vision-language model",
        )
    if wanted in (VLM, VLM_CB, OMNI):
        raise status_error(
            StatusCode.LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED,
            f"node {node}: pipeline_type {PIPELINE_NAMES[wanted]}: {folder} holds a "
            f"{'omni' if wanted == OMNI else 'vision-language'} model, which ovmsx does not "
            "serve yet",
        )
    return PIPELINE_NAMES[wanted]
