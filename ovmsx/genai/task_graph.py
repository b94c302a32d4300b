"""``--task`` and the graph it builds in memory for a model folder, as OVMS does
(COMPAT_GENAI §1.5, §2.3).

``ovmsx --model_name m --model_path DIR --task text_generation [flags]`` serves DIR through an
``HttpLLMCalculator`` graph made from the flags (never written to disk, rebuilt at each start,
``models_path`` absolute). Without ``--task``, a folder holding ``config.json`` and no
``graph.pbtxt`` gets its task from ``config.json``'s ``architectures`` (and ``modules.json``),
in OVMS's order; a folder whose task cannot be told is refused with OVMS's message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ovmsx import __version__
from ovmsx.genai.model_folder import read_json_object
from ovmsx.genai.output_parsers import ParserNameError, check_parser_names

TASKS = (
    "text_generation",
    "embeddings",
    "rerank",
    "image_generation",
    "text2speech",
    "speech2text",
)
SERVED_TASKS = ("text_generation", "embeddings", "rerank")
TEXT_GENERATION = "text_generation"
EMBEDDINGS = "embeddings"
RERANK = "rerank"
POOLINGS = ("CLS", "LAST", "MEAN")
PIPELINE_TYPES = ("LM", "LM_CB", "VLM", "VLM_CB", "AUTO")


class TaskError(ValueError):
    """A ``--task`` value or flag OVMS refuses, with its message."""


@dataclass(frozen=True)
class TextGenerationFlags:
    """The ``--task text_generation`` flags, with OVMS's CLI defaults."""

    max_num_seqs: int = 256
    enable_prefix_caching: bool = True
    cache_size: int = 0
    dynamic_split_fuse: bool = True
    max_num_batched_tokens: int | None = None
    pipeline_type: str | None = None
    reasoning_parser: str | None = None
    tool_parser: str | None = None
    enable_tool_guided_generation: bool = False
    cache_interval_multiplier: int | None = None
    max_tokens_limit: int | None = None
    best_of_limit: int | None = None
    kv_cache_precision: str | None = None
    max_prompt_len: int | None = None
    model_distribution_policy: str | None = None
    draft_source_model: str | None = None


@dataclass(frozen=True)
class EncoderFlags:
    """The ``--task embeddings`` and ``--task rerank`` flags, with OVMS's CLI defaults."""

    normalize: bool = True
    truncate: bool = False
    pooling: str | None = None
    num_streams: int = 1
    max_allowed_chunks: int = 10000


# Which task each encoder flag belongs to (a flag of another task is refused).
ENCODER_FLAG_TASKS = {
    "normalize": EMBEDDINGS,
    "truncate": EMBEDDINGS,
    "pooling": EMBEDDINGS,
    "num_streams": None,  # both
    "max_allowed_chunks": RERANK,
}


def check_task(task: str) -> None:
    if task not in TASKS:
        raise TaskError(f"Error: --task parameter unsupported value: {task}")
    if task not in SERVED_TASKS:
        raise TaskError(f"--task {task}: ovmsx does not serve this task yet")


def check_flags(flags: TextGenerationFlags) -> None:
    try:
        check_parser_names(flags.tool_parser, flags.reasoning_parser)
    except ParserNameError as error:
        raise TaskError(str(error)) from None
    if flags.pipeline_type is not None and flags.pipeline_type not in PIPELINE_TYPES:
        raise TaskError(
            f"--pipeline_type {flags.pipeline_type}: choose one of {', '.join(PIPELINE_TYPES)}"
        )


def check_encoder_flags(task: str, flags: EncoderFlags, given: list[str]) -> None:
    """``given``: the encoder flags on the command line, by field name."""
    for name in given:
        owner = ENCODER_FLAG_TASKS[name]
        if task == TEXT_GENERATION or (owner is not None and owner != task):
            raise TaskError(f"--{name} is not a flag of --task {task}")
    if flags.pooling is not None and flags.pooling not in POOLINGS:
        raise TaskError(f"--pooling {flags.pooling}: choose one of {', '.join(POOLINGS)}")
    if flags.num_streams < 1:
        raise TaskError("--num_streams must be at least 1")


def encoder_graph(
    task: str,
    models_path: Path,
    flags: EncoderFlags,
    device: str | None = None,
    plugin_config: str | None = None,
) -> str:
    """The graph OVMS's ``--task embeddings`` or ``--task rerank`` writes, for ``models_path``
    (absolute)."""
    options: list[tuple[str, str]] = [("models_path", _quoted(str(models_path)))]
    plugin = _json_object(plugin_config)
    plugin.setdefault("NUM_STREAMS", str(flags.num_streams))
    if task == EMBEDDINGS:
        options.append(("normalize_embeddings", _bool(flags.normalize)))
        options.append(("truncate", _bool(flags.truncate)))
        if flags.pooling:
            options.append(("pooling", flags.pooling))
        calculator, name, side_packet = "EmbeddingsCalculatorOV", "EmbeddingsExecutor", "EMBEDDINGS"
    else:
        options.append(("max_allowed_chunks", str(flags.max_allowed_chunks)))
        calculator, name, side_packet = "RerankCalculatorOV", "RerankExecutor", "RERANK"
    if device:
        options.append(("target_device", _quoted(device)))
    options.append(("plugin_config", _quoted(json.dumps(plugin))))
    body = "\n".join(f"      {option}: {value}," for option, value in options)
    return _ENCODER_GRAPH.format(
        version=__version__,
        calculator=calculator,
        name=name,
        side_packet=side_packet,
        servable=name.removesuffix("Executor").lower(),
        options=body.rstrip(","),
    )


def detect_task(folder: Path) -> str | None:
    """The task OVMS infers for a model folder, or None when it cannot tell."""
    architectures = read_json_object(folder / "config.json").get("architectures") or []
    modules = _json_list(folder / "modules.json")
    module_types = {str(module.get("type", "")).rsplit(".", 1)[-1] for module in modules}
    names = [str(name) for name in architectures]
    if (folder / "model_index.json").is_file():
        return "image_generation"
    if "Qwen3ForCausalLM" in names:
        lowered = folder.name.lower()
        if "rerank" in lowered:
            return "rerank"
        if "embed" in lowered:
            return "embeddings"
    if module_types & {"LogitScore", "CrossEncoder"} or any(
        name.endswith("ForSequenceClassification") for name in names
    ):
        return "rerank"
    if "Pooling" in module_types or any(
        name.endswith("Model") and not name.endswith("ForCausalLM") for name in names
    ):
        return "embeddings"
    if any(
        name.endswith(("ForCausalLM", "ForConditionalGeneration")) or name == "InternVLChatModel"
        for name in names
    ):
        return TEXT_GENERATION
    return None


def text_generation_graph(
    models_path: Path,
    flags: TextGenerationFlags,
    device: str | None = None,
    plugin_config: str | None = None,
    cache_dir: Path | None = None,
) -> str:
    """The graph OVMS's ``--task text_generation`` writes, for ``models_path`` (absolute)."""
    options: list[tuple[str, str]] = [
        ("max_num_seqs", str(flags.max_num_seqs)),
        ("models_path", _quoted(str(models_path))),
        ("enable_prefix_caching", _bool(flags.enable_prefix_caching)),
        ("cache_size", str(flags.cache_size)),
    ]
    if device:
        options.append(("device", _quoted(device)))
    plugin = _plugin_config(flags, plugin_config, cache_dir)
    if plugin:
        options.append(("plugin_config", _quoted(json.dumps(plugin))))
    if flags.pipeline_type:
        options.append(("pipeline_type", flags.pipeline_type))
    for name in ("max_num_batched_tokens", "cache_interval_multiplier", "max_tokens_limit",
                 "best_of_limit"):  # fmt: skip
        value = getattr(flags, name)
        if value is not None:
            options.append((name, str(value)))
    for name in ("reasoning_parser", "tool_parser"):
        value = getattr(flags, name)
        if value:
            options.append((name, _quoted(value)))
    if flags.draft_source_model:
        # A local folder as given; a hub name as OVMS's pull lays it out (a "/" becomes "-").
        draft = Path(flags.draft_source_model)
        name = (
            str(draft.resolve()) if draft.exists() else flags.draft_source_model.replace("/", "-")
        )
        options.append(("draft_models_path", _quoted(name)))
    if flags.enable_tool_guided_generation:
        options.append(("enable_tool_guided_generation", "true"))
    if not flags.dynamic_split_fuse:
        options.append(("dynamic_split_fuse", "false"))
    body = "\n".join(f"        {name}: {value}," for name, value in options)
    return _GRAPH.format(version=__version__, options=body.rstrip(","))


def _json_object(given: str | None) -> dict:
    if not given:
        return {}
    try:
        config = json.loads(given)
    except ValueError as error:
        raise TaskError(f"--plugin_config is not valid JSON: {error}") from None
    if not isinstance(config, dict):
        raise TaskError("--plugin_config must be a JSON object")
    return config


def _plugin_config(flags: TextGenerationFlags, given: str | None, cache_dir: Path | None) -> dict:
    config = _json_object(given)
    from_flags = {
        "KV_CACHE_PRECISION": flags.kv_cache_precision or None,
        "MAX_PROMPT_LEN": flags.max_prompt_len,
        "MODEL_DISTRIBUTION_POLICY": flags.model_distribution_policy,
    }
    for key, value in from_flags.items():
        if value is None:
            continue
        if key in config:
            raise TaskError(f"Doubled {key} parameter in plugin config.")
        config[key] = value
    if cache_dir is not None and "CACHE_DIR" not in config:
        config["CACHE_DIR"] = str(cache_dir)
    return config


def _quoted(text: str) -> str:
    return json.dumps(text)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _json_list(path: Path) -> list[dict]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


_GRAPH = """\
# File created with: ovmsx {version}
# OVMS_GRAPH_QUEUE_MAX_SIZE: AUTO
input_stream: "HTTP_REQUEST_PAYLOAD:input"
output_stream: "HTTP_RESPONSE_PAYLOAD:output"

node: {{
  name: "LLMExecutor"
  calculator: "HttpLLMCalculator"
  input_stream: "LOOPBACK:loopback"
  input_stream: "HTTP_REQUEST_PAYLOAD:input"
  input_side_packet: "LLM_NODE_RESOURCES:llm"
  input_side_packet: "LLM_NODE_EXECUTION_CONTEXTS:llm_ctx"
  output_stream: "LOOPBACK:loopback"
  output_stream: "HTTP_RESPONSE_PAYLOAD:output"
  input_stream_info: {{
    tag_index: 'LOOPBACK:0',
    back_edge: true
  }}
  node_options: {{
      [type.googleapis.com / mediapipe.LLMCalculatorOptions]: {{
{options}
      }}
  }}
  input_stream_handler {{
    input_stream_handler: "SyncSetInputStreamHandler",
    options {{
      [mediapipe.SyncSetInputStreamHandlerOptions.ext] {{
        sync_set {{
          tag_index: "LOOPBACK:0"
        }}
      }}
    }}
  }}
}}
"""

_ENCODER_GRAPH = """\
# File created with: ovmsx {version}
input_stream: "REQUEST_PAYLOAD:input"
output_stream: "RESPONSE_PAYLOAD:output"

node {{
  name: "{name}"
  input_side_packet: "{side_packet}_NODE_RESOURCES:{servable}"
  calculator: "{calculator}"
  input_stream: "REQUEST_PAYLOAD:input"
  output_stream: "RESPONSE_PAYLOAD:output"
  node_options: {{
    [type.googleapis.com / mediapipe.{calculator}Options]: {{
{options}
    }}
  }}
}}
"""
