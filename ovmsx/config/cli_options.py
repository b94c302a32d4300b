"""The ``ovms`` command-line flags, parsed into ``ServerOptions`` and checked the way OVMS does.

Every problem, from an unknown flag to two flags that exclude each other, raises
``UsageError``; the caller prints it and exits with ``UsageError.exit_code`` (64, ``EX_USAGE``,
as ``ovms`` does). ``--help`` prints and raises ``SystemExit(0)`` (argparse's way); ``--version``
only sets ``ServerOptions.version`` and skips the checks, for the caller to act on.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import json
import logging
import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from ovmsx.config.errors import UsageError, validation_problems
from ovmsx.config.model_config import REMOTE_PREFIXES, ModelConfig
from ovmsx.config.preprocessing import FLAGS as PREPROCESSING_FLAGS
from ovmsx.config.preprocessing import Preprocessing, parse_preprocessing
from ovmsx.frontend.memory_budget import DEFAULT_QUOTA
from ovmsx.genai.engine.engine_limits import EngineLimits, parse_size
from ovmsx.genai.task_graph import (
    TEXT_GENERATION,
    EncoderFlags,
    TaskError,
    TextGenerationFlags,
    check_encoder_flags,
    check_flags,
    check_task,
)
from ovmsx.status import StatusError

log = logging.getLogger("ovmsx.config")

LOG_LEVELS = ("TRACE", "DEBUG", "INFO", "WARNING", "ERROR")
MAX_PORT = 65535
MAX_REST_WORKERS = 10_000

# Single-model flags that end up in the ModelConfig; OVMS refuses them next to --config_path.
MODEL_FLAGS = (
    "batch_size",
    "shape",
    "layout",
    "model_version_policy",
    "nireq",
    "target_device",
    "plugin_config",
)
# Flags of stateful models, which OVMS removed in 2026.3.
REMOVED_FLAGS = (
    "stateful",
    "idle_sequence_cleanup",
    "low_latency_transformation",
    "max_sequence_number",
    "sequence_cleaner_poll_wait_minutes",
)
# Server flags ovmsx takes, as OVMS does, but cannot act on: each one given is named in a
# warning at start, with the reason.
_LLM_ONLY = "ovmsx's /v3 answers do not carry OVMS's __verbose field yet"
UNHONOURED_FLAGS = {
    "grpc_max_threads": "grpcio does not expose gRPC's thread quota to Python servers",
    "cpu_extension": "ovmsx does not load OpenVINO CPU extension libraries",
    "custom_node_resources_cleaner_interval_seconds": (
        "ovmsx keeps no pooled custom-node buffers that would need cleaning"
    ),
    "allowed_local_media_path": "it concerns images sent to vision-language models, which "
    "ovmsx does not serve",
    "allowed_media_domains": "it concerns images sent to vision-language models, which ovmsx "
    "does not serve",
    "verbose_response": _LLM_ONLY,
}
# Flags of OVMS's pull mode that mean nothing without it (ovmsx/pull takes the command lines
# that name --pull or --source_model before these options are parsed).
PULL_ONLY_FLAGS = (
    "source_loras",
    "gguf_filename",
    "overwrite_models",
    "weight-format",
    "extra_quantization_params",
    "model_repository_path",
)
# How ModelConfig fields are spelled on the command line, where they differ.
_FLAG_OF_FIELD = {"name": "model_name", "base_path": "model_path"}

_DIGITS = re.compile(r"\d+")
_INTEGER = re.compile(r"-?\d+")
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"(?:{_HOST_LABEL}\.)*{_HOST_LABEL}")

ChannelArgument = tuple[str, int | str]


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """The server's command line, validated. Field names are the flag names."""

    config_path: Path | None = None
    """``--config_path``: the multi-model ``config.json``, absolute."""
    port: int = 0
    """``--port``: gRPC port; 0 = no gRPC server."""
    grpc_bind_address: str = "0.0.0.0"
    """``--grpc_bind_address``: comma-separated addresses; see ``grpc_bind_addresses``."""
    rest_port: int = 0
    """``--rest_port``: HTTP port of the KServe REST API and ``/metrics``; 0 = no REST."""
    rest_bind_address: str = "0.0.0.0"
    """``--rest_bind_address``."""
    grpc_workers: int = 1
    """``--grpc_workers``: serving processes sharing the gRPC port, 1 to the CPU count
    (ovmsx/workers.py; OVMS runs that many gRPC servers in one process)."""
    grpc_max_threads: int | None = None
    """``--grpc_max_threads``: gRPC resource quota threads; ``None`` = server default."""
    grpc_memory_quota: int | None = None
    """``--grpc_memory_quota`` in bytes; ``None`` = the default, see ``memory_quota``."""
    grpc_channel_arguments: tuple[ChannelArgument, ...] = ()
    """``--grpc_channel_arguments``: ``(key, value)`` pairs; integer-looking values are ints."""
    rest_workers: int | None = None
    """``--rest_workers``: 2 to 10000, needs ``--rest_port``; ``None`` = server default."""
    rest_request_timeout: float = 30.0
    """``--rest_request_timeout`` (ovmsx's own): seconds a REST request's head, or its body,
    may take to arrive before its connection is closed (rest_request_deadline.py)."""
    log_level: str = "INFO"
    """``--log_level``: one of ``LOG_LEVELS``."""
    log_path: Path | None = None
    """``--log_path``: also write the log to this file."""
    file_system_poll_wait_seconds: int = 1
    """``--file_system_poll_wait_seconds``: config and version polling period; 0 = off."""
    custom_node_resources_cleaner_interval_seconds: int = 300
    """``--custom_node_resources_cleaner_interval_seconds``; 0 = off."""
    cache_dir: Path | None = None
    """``--cache_dir``: OpenVINO model cache folder."""
    metrics_enable: bool = False
    """``--metrics_enable``: serve ``/metrics`` on the REST port."""
    metrics_list: tuple[str, ...] = ()
    """``--metrics_list``: the metric names to enable; empty = the default set."""
    cpu_extension: Path | None = None
    """``--cpu_extension``: an OpenVINO CPU extension library; taken, never loaded (warned)."""
    version: bool = False
    """``--version``: print versions and exit; when set, nothing else was checked."""
    model_name: str | None = None
    """``--model_name``: single-model mode."""
    model_path: str | None = None
    """``--model_path``: absolute (resolved against the working directory) or a cloud URL."""
    batch_size: str | None = None
    """``--batch_size`` as given; parsed by ``single_model_config``."""
    shape: str | None = None
    """``--shape``: a shape string or a JSON object ``{input: shape}``."""
    layout: str | None = None
    """``--layout``: a layout string or a JSON object ``{input: layout}``."""
    model_version_policy: str | None = None
    """``--model_version_policy``: JSON, e.g. ``{"latest": {"num_versions": 2}}``."""
    nireq: int | None = None
    """``--nireq``."""
    target_device: str | None = None
    """``--target_device``; ``None`` = the ModelConfig default (CPU)."""
    plugin_config: str | None = None
    """``--plugin_config``: JSON object of OpenVINO properties."""
    mean: str | None = None
    scale: str | None = None
    color_format: str | None = None
    precision: str | None = None
    """``--mean``, ``--scale``, ``--color_format``, ``--precision`` as given; parsed by
    ``single_model_config`` (config/preprocessing.py)."""
    engine_limits: EngineLimits = dataclasses.field(default_factory=EngineLimits)
    """``--engine_max_rss``, ``--engine_max_requests``: when an LLM engine is replaced."""
    api_key: str = ""
    """The key ``/v3`` requests must carry: ``--api_key_file``'s first line (trailing blanks
    trimmed), else the ``API_KEY`` environment variable; "" = no check."""
    allowed_origins: str = "*"
    allowed_methods: str = "*"
    allowed_headers: str = "*"
    allow_credentials: bool = False
    """CORS: ``--allowed_origins``, ``--allowed_methods``, ``--allowed_headers``,
    ``--allow_credentials`` (ovmsx/frontend/cors.py)."""
    task: str | None = None
    """``--task``: serve ``--model_path`` through a graph built in memory (genai/task_graph.py)."""
    text_generation: TextGenerationFlags | None = None
    """The ``--task text_generation`` flags given (None: none given)."""
    encoder: EncoderFlags | None = None
    """The ``--task embeddings`` / ``--task rerank`` flags given (None: none given)."""

    @property
    def memory_quota(self) -> int:
        """Request bytes in flight, gRPC and REST together (ovmsx/frontend/memory_budget.py);
        2 GiB unless ``--grpc_memory_quota`` says otherwise, as in OVMS."""
        return DEFAULT_QUOTA if self.grpc_memory_quota is None else self.grpc_memory_quota

    @property
    def grpc_bind_addresses(self) -> tuple[str, ...]:
        """Each address of ``--grpc_bind_address``."""
        return _split_list(self.grpc_bind_address)

    def preprocessing(self) -> Preprocessing | None:
        """What ``--mean``, ``--scale``, ``--color_format`` and ``--precision`` ask; raises
        ``UsageError`` naming the flag and OVMS's code for a bad value."""
        try:
            return parse_preprocessing(self.mean, self.scale, self.color_format, self.precision)
        except StatusError as bad:
            raise UsageError(f"{bad} ({bad.code.name})") from None

    def single_model_config(self) -> ModelConfig | None:
        """The ModelConfig the single-model flags describe; ``None`` in config-file mode.

        Raises ``UsageError`` naming the flag for a bad value (``parse_options`` has already
        called this once, so options it returned do not raise).
        """
        if self.model_name is None or self.model_path is None:
            return None
        data: dict[str, Any] = {"name": self.model_name, "base_path": self.model_path}
        for flag in MODEL_FLAGS:
            value = getattr(self, flag)
            if value is None:
                continue
            if flag in ("model_version_policy", "plugin_config") or (
                flag in ("shape", "layout") and value.lstrip().startswith("{")
            ):
                value = _json_flag(flag, value)
            data[flag] = value
        context = {"config_dir": Path.cwd(), "preprocessing": self.preprocessing()}
        try:
            return ModelConfig.model_validate(data, context=context)
        except ValidationError as bad:
            (loc, problem), *_ = validation_problems(bad)
            field, _, rest = loc.partition(".")
            flag = _FLAG_OF_FIELD.get(field, field)
            raise UsageError(f"--{flag}: {rest + ': ' if rest else ''}{problem}") from None


class _Parser(argparse.ArgumentParser):
    # argparse exits with status 2 on its own; OVMS uses EX_USAGE, so hand the message back.
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser for the ``ovms`` flags (errors raise ``UsageError``)."""
    parser = _Parser(
        prog="ovmsx",
        description="OpenVINO Model Server, reimplemented as a Python package.",
        allow_abbrev=False,  # OVMS (cxxopts) takes whole flag names only
    )
    parser.add_argument(
        "--version", action="store_true", help="print the ovmsx and OpenVINO versions and exit"
    )
    server = parser.add_argument_group("server options")
    add = server.add_argument
    add("--config_path", metavar="PATH", help="multi-model JSON configuration file")
    add("--port", type=as_uint, metavar="N", default=0, help="gRPC port (0: no gRPC server)")
    add(
        "--grpc_bind_address",
        metavar="ADDRESSES",
        default="0.0.0.0",
        help="comma-separated gRPC addresses",
    )
    add("--rest_port", type=as_uint, metavar="N", default=0, help="HTTP port (0: no REST server)")
    add("--rest_bind_address", metavar="ADDRESS", default="0.0.0.0", help="REST address")
    add(
        "--grpc_workers",
        type=as_uint,
        metavar="N",
        default=1,
        help="serving processes sharing the gRPC port (1..CPU count)",
    )
    add("--grpc_max_threads", type=as_uint, metavar="N", help="gRPC resource quota: max threads")
    add(
        "--grpc_memory_quota",
        type=as_uint,
        metavar="N",
        help="bytes of requests in flight, gRPC and REST together (default 2 GiB)",
    )
    add(
        "--grpc_channel_arguments",
        metavar="ARGS",
        help="gRPC channel arguments: key=value,key2=value2",
    )
    add(
        "--rest_workers",
        type=as_uint,
        metavar="N",
        help="REST worker threads in OVMS (2..10000); checked, then unused: see --grpc_workers",
    )
    add(
        "--rest_request_timeout",
        type=_seconds,
        metavar="SECONDS",
        default=30.0,
        help="ovmsx's own: seconds a REST request's head or body may take to arrive (30)",
    )
    add("--log_level", metavar="LEVEL", default="INFO", help="one of " + ", ".join(LOG_LEVELS))
    add("--log_path", metavar="PATH", help="also write the log to this file")
    add(
        "--file_system_poll_wait_seconds",
        type=as_uint,
        metavar="N",
        default=1,
        help="config polling period",
    )
    add(
        "--custom_node_resources_cleaner_interval_seconds",
        type=as_uint,
        metavar="N",
        default=300,
        help="custom node resources cleaner period",
    )
    add("--cache_dir", metavar="PATH", help="OpenVINO model cache folder")
    add(
        "--metrics_enable",
        type=as_bool,
        metavar="BOOL",
        nargs="?",
        const=True,
        default=False,
        help="serve /metrics on the REST port",
    )
    add("--metrics_list", metavar="NAMES", help="comma-separated metric names")
    add("--cpu_extension", metavar="PATH", help="OpenVINO CPU extension library (ignored)")
    add(
        "--api_key_file",
        metavar="PATH",
        help="file whose first line is the key /v3 requests must send as 'Authorization: "
        "Bearer KEY' (default: the API_KEY environment variable; none: no check)",
    )
    add("--allowed_origins", metavar="ORIGINS", default="*", help="CORS allowed origins (*)")
    add("--allowed_methods", metavar="METHODS", default="*", help="CORS allowed methods (*)")
    add("--allowed_headers", metavar="HEADERS", default="*", help="CORS allowed headers (*)")
    add(
        "--allow_credentials",
        type=as_bool,
        metavar="BOOL",
        nargs="?",
        const=True,
        default=False,
        help="send Access-Control-Allow-Credentials: true",
    )
    for flag in ("allowed_local_media_path", "allowed_media_domains"):
        add(f"--{flag}", metavar="VALUE", help="generative AI option, accepted and ignored")
    add(
        "--verbose_response",
        type=as_bool,
        metavar="BOOL",
        nargs="?",
        const=True,
        help="generative AI option, accepted and ignored",
    )
    engines = parser.add_argument_group("LLM engines (beyond OVMS)")
    engines.add_argument(
        "--engine_max_rss",
        type=_size,
        metavar="SIZE",
        help="replace an LLM engine whose memory passes SIZE (MiB, or 512M, 4G), losing no request",
    )
    engines.add_argument(
        "--engine_max_requests",
        type=_at_least_one,
        metavar="N",
        help="replace an LLM engine after N generations, losing no request",
    )
    add_task_flags(parser)
    model = parser.add_argument_group("single model options (instead of --config_path)")
    add = model.add_argument
    add("--model_name", metavar="NAME", help="name clients use for the model")
    add(
        "--model_path",
        metavar="PATH",
        help="model folder (version subfolders 1/, 2/, ...), local or s3://, gs://; "
        "or a model file, served as version 1",
    )
    add("--batch_size", metavar="SIZE", help='batch size: a number, a range like 1:8, -1 or "auto"')
    add(
        "--shape",
        metavar="SHAPE",
        help='shape like "(1,3,224,224)", "auto", or JSON {input: shape}',
    )
    add("--layout", metavar="LAYOUT", help='layout like "NHWC:NCHW", or JSON {input: layout}')
    add("--model_version_policy", metavar="JSON", help='JSON, e.g. {"latest": {"num_versions": 1}}')
    add("--nireq", type=as_uint, metavar="N", help="parallel infer requests (0: automatic)")
    add("--target_device", metavar="DEVICE", help="OpenVINO device (default CPU)")
    add("--plugin_config", metavar="JSON", help="JSON object of OpenVINO properties")
    add("--mean", metavar="VALUES", help='subtracted from the input: a float or "[r,g,b]"')
    add("--scale", metavar="VALUES", help='divides the input after --mean: a float or "[r,g,b]"')
    add("--color_format", metavar="MODEL:CLIENT", help="color conversion, e.g. BGR:NV12")
    add("--precision", metavar="CLIENT:MODEL", help="element type conversion, e.g. uint8:fp32")
    for flag in REMOVED_FLAGS:
        add(f"--{flag}", nargs="?", const="", help=argparse.SUPPRESS)
    return parser


def add_task_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "generative AI: serve --model_path through a graph built from these flags"
    )
    add = group.add_argument
    add("--task", metavar="TASK", help="text_generation, embeddings or rerank")
    add("--max_num_seqs", type=as_uint, metavar="N", help="sequences processed together (256)")
    add("--max_num_batched_tokens", type=as_uint, metavar="N", help="tokens per step (256)")
    add("--cache_size", type=as_uint, metavar="GB", help="KV cache in GB; 0 = grows as needed (0)")
    add("--enable_prefix_caching", type=as_bool, metavar="BOOL", help="reuse prompt KV (true)")
    add("--dynamic_split_fuse", type=as_bool, metavar="BOOL", help="split long prompts (true)")
    add("--pipeline_type", metavar="TYPE", help="LM, LM_CB or AUTO (AUTO)")
    add(
        "--max_tokens_limit", type=as_uint, metavar="N", help="largest max_tokens a request may ask"
    )
    add("--best_of_limit", type=as_uint, metavar="N", help="largest best_of a request may ask (20)")
    add("--reasoning_parser", metavar="NAME", help="reasoning parser, e.g. qwen3")
    add("--tool_parser", metavar="NAME", help="tool call parser, e.g. hermes3")
    add(
        "--enable_tool_guided_generation",
        type=as_bool,
        metavar="BOOL",
        help="hermes3 calls follow the tools (false)",
    )
    add("--cache_interval_multiplier", type=as_uint, metavar="N", help="KV cache block interval")
    add("--kv_cache_precision", metavar="PRECISION", help="KV cache precision, e.g. u8")
    add("--max_prompt_len", type=as_uint, metavar="N", help="NPU: longest prompt")
    add(
        "--model_distribution_policy", metavar="POLICY", help="TENSOR_PARALLEL or PIPELINE_PARALLEL"
    )
    add("--draft_source_model", metavar="PATH", help="draft model for speculative decoding")
    add("--normalize", type=as_bool, metavar="BOOL", help="embeddings: L2-normalise (true)")
    add("--truncate", type=as_bool, metavar="BOOL", help="embeddings: cut long inputs (false)")
    add("--pooling", metavar="MODE", help="embeddings: CLS, LAST or MEAN (from the folder)")
    add("--num_streams", type=as_uint, metavar="N", help="embeddings, rerank: CPU streams (1)")
    add("--max_allowed_chunks", type=as_uint, metavar="N", help="rerank: most chunks (10000)")


def parse_options(argv: Sequence[str] | None = None) -> ServerOptions:
    """Parse and check the command line (``sys.argv[1:]`` when ``argv`` is ``None``)."""
    argv = sys.argv[1:] if argv is None else argv
    _refuse_other_modes(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    for flag in REMOVED_FLAGS:
        if getattr(args, flag) is not None:
            raise UsageError(
                f"--{flag} was removed in OVMS 2026.3 together with stateful models, "
                "which ovmsx does not serve"
            )
    for flag, reason in UNHONOURED_FLAGS.items():
        if getattr(args, flag) != parser.get_default(flag):
            log.warning("--%s is accepted for compatibility and ignored: %s", flag, reason)
    options = _options(args)
    if not options.version:
        _check(options, args)
        options.single_model_config()
    return options


def _refuse_other_modes(argv: Sequence[str]) -> None:
    for token in argv:
        flag = token.partition("=")[0].removeprefix("--")
        if token.startswith("--") and flag in PULL_ONLY_FLAGS:
            raise UsageError(
                f"--{flag} belongs to the pull mode: give it with --source_model (and --pull)"
            )


def _options(args: argparse.Namespace) -> ServerOptions:
    model_path = args.model_path
    if model_path is not None and not model_path.startswith(REMOTE_PREFIXES):
        model_path = os.path.abspath(model_path)
    return ServerOptions(
        config_path=_absolute(args.config_path),
        port=args.port,
        grpc_bind_address=args.grpc_bind_address,
        rest_port=args.rest_port,
        rest_bind_address=args.rest_bind_address,
        grpc_workers=args.grpc_workers,
        grpc_max_threads=args.grpc_max_threads,
        grpc_memory_quota=args.grpc_memory_quota,
        grpc_channel_arguments=_channel_arguments(args.grpc_channel_arguments or ""),
        rest_workers=args.rest_workers,
        rest_request_timeout=args.rest_request_timeout,
        log_level=args.log_level,
        log_path=_absolute(args.log_path),
        file_system_poll_wait_seconds=args.file_system_poll_wait_seconds,
        custom_node_resources_cleaner_interval_seconds=(
            args.custom_node_resources_cleaner_interval_seconds
        ),
        cache_dir=_absolute(args.cache_dir),
        metrics_enable=args.metrics_enable,
        metrics_list=_split_list(args.metrics_list or ""),
        cpu_extension=_absolute(args.cpu_extension),
        version=args.version,
        model_name=args.model_name,
        model_path=model_path,
        batch_size=args.batch_size,
        shape=args.shape,
        layout=args.layout,
        model_version_policy=args.model_version_policy,
        nireq=args.nireq,
        target_device=args.target_device,
        plugin_config=args.plugin_config,
        mean=args.mean,
        scale=args.scale,
        color_format=args.color_format,
        precision=args.precision,
        api_key=_api_key(args.api_key_file),
        allowed_origins=args.allowed_origins,
        allowed_methods=args.allowed_methods,
        allowed_headers=args.allowed_headers,
        allow_credentials=args.allow_credentials,
        task=args.task,
        text_generation=_text_generation_flags(args),
        encoder=_encoder_flags(args),
        engine_limits=EngineLimits(args.engine_max_rss, args.engine_max_requests),
    )


def _at_least_one(text: str) -> int:
    value = as_uint(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except (ValueError, IndexError):
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 4096, 512M, 4G)") from None


def _given(flags_class, args: argparse.Namespace) -> dict:
    """The fields of ``flags_class`` given on the command line."""
    fields = (field.name for field in dataclasses.fields(flags_class))
    return {name: getattr(args, name) for name in fields if getattr(args, name) is not None}


def _text_generation_flags(args: argparse.Namespace) -> TextGenerationFlags | None:
    given = _given(TextGenerationFlags, args)
    if not given:
        return None
    flags = TextGenerationFlags(**given)
    try:
        check_flags(flags)
    except TaskError as error:
        raise UsageError(str(error)) from None
    return flags


def _encoder_flags(args: argparse.Namespace) -> EncoderFlags | None:
    given = _given(EncoderFlags, args)
    if not given:
        return None
    if args.task is None:
        raise UsageError(f"--{next(iter(given))} needs --task embeddings or --task rerank")
    flags = EncoderFlags(**given)
    try:
        check_encoder_flags(args.task, flags, list(given))
    except TaskError as error:
        raise UsageError(str(error)) from None
    return flags


def _api_key(path: str | None) -> str:
    """OVMS: the file's first line, trailing whitespace trimmed (an unreadable file stops the
    server); without a file, the API_KEY environment variable."""
    if path is None:
        return os.environ.get("API_KEY", "")
    try:
        with open(path, encoding="utf-8") as file:
            return file.readline().rstrip()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--api_key_file {path}: cannot read the API key: {error}") from None


def _check(options: ServerOptions, args: argparse.Namespace) -> None:
    # The checks and messages of OVMS's Config::validate, in its order.
    single = args.model_name is not None or args.model_path is not None
    if options.config_path is not None and single:
        raise UsageError("Use either config_path or model_path with model_name")
    if options.config_path is None and (args.model_name is None or args.model_path is None):
        raise UsageError("Use config_path or model_path with model_name")
    model_flags = (*MODEL_FLAGS, *PREPROCESSING_FLAGS)
    if options.config_path is not None and any(getattr(args, f) is not None for f in model_flags):
        raise UsageError("Model parameters in CLI are exclusive with the config file")
    for flag in ("mean", "scale"):
        if getattr(args, flag) is not None and args.layout is None:
            raise UsageError(f"--{flag} parameter requires --layout to be set")
    if options.task is not None or options.text_generation is not None:
        for flag in PREPROCESSING_FLAGS:
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag} applies to a model, not to a --task graph")
        if options.config_path is not None:
            raise UsageError("--task and its flags serve --model_path; they take no --config_path")
        try:
            check_task(options.task or TEXT_GENERATION)
        except TaskError as error:
            raise UsageError(str(error)) from None
        if options.text_generation is not None and options.task not in (None, TEXT_GENERATION):
            raise UsageError(f"--task {options.task} takes no text_generation flags")
    cores = os.cpu_count() or 1
    if not 1 <= options.grpc_workers <= cores:
        raise UsageError(f"grpc_workers count should be from 1 to CPU core count : {cores}")
    if options.rest_workers is not None:
        if not 2 <= options.rest_workers <= MAX_REST_WORKERS:
            raise UsageError(f"rest_workers count should be from 2 to {MAX_REST_WORKERS}")
        if options.rest_port == 0:
            raise UsageError(
                "rest_workers is set but rest_port is not set. "
                "rest_port is required to start rest servers"
            )
    for flag in ("port", "rest_port"):
        if getattr(options, flag) > MAX_PORT:
            raise UsageError(f"{flag} number out of range from 0 to {MAX_PORT}")
    if options.metrics_enable and options.rest_port == 0:
        raise UsageError("rest_port setting is missing, metrics are enabled on rest port")
    if options.metrics_list and not options.metrics_enable:
        raise UsageError(
            "metrics_enable setting is missing, required when metrics_list is provided"
        )
    for flag, addresses in (
        ("rest_bind_address", (options.rest_bind_address,)),
        ("grpc_bind_address", options.grpc_bind_addresses),
    ):
        if not addresses or not all(_valid_host(a) for a in addresses):
            raise UsageError(f"{flag} has invalid format: proper hostname or IP address expected.")
    if options.port == options.rest_port:
        # OVMS's sentence, then what it means when both are 0: no server was asked for at all.
        unset = (
            ": neither --port (gRPC) nor --rest_port (REST) is set; give one of them, or both"
            if options.port == 0
            else ""
        )
        raise UsageError(f"port and rest_port cannot have the same values{unset}")
    # --cpu_extension is not checked: ovmsx never loads it (UNHONOURED_FLAGS warns so), and a
    # check of a file that is then ignored would only contradict that warning.
    if options.log_level not in LOG_LEVELS:
        raise UsageError("log_level should be one of: " + ", ".join(LOG_LEVELS))


def as_uint(text: str) -> int:
    if not _DIGITS.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return seconds


def as_bool(text: str) -> bool:
    words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
    try:
        return words[text.strip().lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}") from None


def _absolute(text: str | None) -> Path | None:
    return None if text is None else Path(os.path.abspath(text))


def _split_list(text: str) -> tuple[str, ...]:
    return tuple(item for item in (part.strip() for part in text.split(",")) if item)


def _channel_arguments(text: str) -> tuple[ChannelArgument, ...]:
    # gRPC takes integer channel arguments as ints and the rest as strings.
    result: list[ChannelArgument] = []
    for item in _split_list(text):
        key, sep, value = re.sub(r"\s+", "", item).partition("=")
        if not key or not sep or not value or "=" in value:
            raise UsageError(
                "grpc_channel_arguments: expected key=value pairs separated by commas, "
                f"got {item!r}"
            )
        result.append((key, int(value) if _INTEGER.fullmatch(value) else value))
    return tuple(result)


def _valid_host(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        pass
    # Like OVMS: a dotted all-digit name must be a real IPv4 address, not a host name.
    if set(text) <= set("0123456789."):
        return False
    return len(text) <= 255 and _HOSTNAME.fullmatch(text) is not None


def _json_flag(flag: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as bad:
        raise UsageError(f"--{flag}: not valid JSON: {bad.msg} (column {bad.colno})") from None
