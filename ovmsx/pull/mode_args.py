"""Which of OVMS's other modes a command line asks for, and its settings.

``ovms`` does more than serve: ``--pull``/``--source_model`` pull a model from Hugging Face
(and serve it unless ``--pull``), ``--list_models`` lists a model repository,
``--add_to_config``/``--remove_from_config`` edit a ``config.json``. ``parse_other_mode`` reads
such a command line (flag names, checks and messages of src/cli_parser.cpp and src/config.cpp)
and returns ``None`` for a plain serving one, which it leaves alone.

For a pull that goes on to serve, the flags that are not the pull's (ports, logging, ...) are
handed back as ``OtherMode.serve_argv``, followed by ``--model_name``/``--model_path`` naming
the pulled folder: the command line to serve it with.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from ovmsx.config.cli_options import add_task_flags, as_bool, as_uint, build_parser
from ovmsx.config.errors import UsageError
from ovmsx.genai.task_graph import TASKS
from ovmsx.pull.config_edit import CONFIG_FILE, OPTIONAL_FIELDS, ModelEntry
from ovmsx.pull.request import PullRequest
from ovmsx.pull.task_flags import task_flags

PULL = "pull"
LIST_MODELS = "list_models"
ADD_TO_CONFIG = "add_to_config"
REMOVE_FROM_CONFIG = "remove_from_config"
REPOSITORY_ENV = "OVMS_MODEL_REPOSITORY_PATH"
"""OVMS's default for ``--model_repository_path``, and (with ``/config.json``) for the config
edited by ``--add_to_config``/``--remove_from_config``."""

_MODE_FLAGS = ("pull", "source_model", "list_models", "add_to_config", "remove_from_config")
_USAGE = (
    "Usage:\n"
    "  ovmsx --add_to_config --config_path <config_path> --model_name <model_name> "
    "--model_repository_path <repo_path>\n"
    "  ovmsx --add_to_config --config_path <config_path> --model_name <model_name> "
    "--model_path <model_path>\n"
    "  ovmsx --remove_from_config --config_path <config_path> --model_name <model_name>"
)


@dataclass(frozen=True)
class OtherMode:
    """A command line of one of the other modes, checked."""

    kind: str
    """``PULL``, ``LIST_MODELS``, ``ADD_TO_CONFIG`` or ``REMOVE_FROM_CONFIG``."""
    pull: PullRequest | None = None
    repository: Path | None = None
    """``LIST_MODELS``: the repository to list."""
    config_path: Path | None = None
    """``ADD_TO_CONFIG``/``REMOVE_FROM_CONFIG``: the file, or the folder holding config.json."""
    default_config_path: bool = False
    """``config_path`` came from ``OVMS_MODEL_REPOSITORY_PATH`` (OVMS says so when it edits)."""
    entry: ModelEntry | None = None
    """``ADD_TO_CONFIG``: the entry to add."""
    model_name: str | None = None
    """``REMOVE_FROM_CONFIG``: the model to remove."""
    serve_argv: tuple[str, ...] | None = None
    """A pull without ``--pull``: the serving command line for the pulled folder."""


def asks_for_other_mode(argv: Sequence[str]) -> bool:
    """True when ``argv`` holds a flag of the pull or config-management modes."""
    return bool(_flags_present(argv) & set(_MODE_FLAGS))


def _flags_present(argv: Sequence[str]) -> set[str]:
    return {token[2:].partition("=")[0] for token in argv if token.startswith("--")}


def parse_other_mode(argv: Sequence[str]) -> OtherMode | None:
    """The mode ``argv`` asks for, checked; ``None`` for a serving command line. Raises
    ``UsageError`` (exit 64) with OVMS's message for flags it refuses."""
    if not asks_for_other_mode(argv):
        return None
    args, rest = _parser().parse_known_args(list(argv))
    # A mode flag given at all selects its mode, whatever its value (OVMS tests the flags'
    # presence: `--pull=false` still pulls without serving).
    present = _flags_present(argv)
    for name in ("pull", "list_models", "add_to_config", "remove_from_config"):
        value = getattr(args, name)
        setattr(args, name, value if isinstance(value, str) else name in present)
    _check_exclusive(args)
    if args.list_models:
        return _list_models(args, rest)
    if args.add_to_config or args.remove_from_config:
        return _config_edit(args, rest)
    return _pull(args, rest)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ovmsx", add_help=False, allow_abbrev=False)
    pull = parser.add_argument_group("pull hf model")
    add = pull.add_argument
    add("--pull", type=as_bool, nargs="?", const=True, default=False)
    add("--source_model")
    add("--gguf_filename")
    add("--overwrite_models", type=as_bool, nargs="?", const=True, default=False)
    add("--model_repository_path")
    add("--weight-format", dest="weight_format")
    add("--extra_quantization_params")
    add("--source_loras")
    add("--vocoder")
    manage = parser.add_argument_group("config management")
    add = manage.add_argument
    add("--list_models", type=as_bool, nargs="?", const=True, default=False)
    # OVMS 2025 took the config path as these flags' value; later releases take --config_path
    # and a plain flag. Both forms are accepted.
    add("--add_to_config", type=_flag_or_path, nargs="?", const=True, default=False)
    add("--remove_from_config", type=_flag_or_path, nargs="?", const=True, default=False)
    add("--config_path")
    model = parser.add_argument_group("model")
    add = model.add_argument
    add("--model_name")
    add("--model_path")
    add("--cache_dir")
    for name in OPTIONAL_FIELDS:
        add(f"--{name}", type=as_uint if name == "nireq" else str)
    add_task_flags(parser)
    return parser


# The pull and config-management flags, as ``--help`` lists them after the serving flags.
_MODE_HELP = {
    "pull hf model (OVMS's pull mode; with --task the folder is served after the pull)": {
        "--pull": "pull --source_model into --model_repository_path and exit",
        "--source_model": "Hugging Face repository (OpenVINO/..., or a GGUF repository)",
        "--gguf_filename": "the .gguf file of a GGUF repository",
        "--overwrite_models": "pull again over a folder already there",
        "--model_repository_path": "where pulled models go (OVMS_MODEL_REPOSITORY_PATH)",
        "--weight-format": "precision of a conversion, which ovmsx prints for you to run",
        "--extra_quantization_params": "options of that conversion",
        "--source_loras": "LoRA adapters (refused: ovmsx does not pull them)",
        "--vocoder": "a text-to-speech vocoder (refused: ovmsx does not pull one)",
    },
    "config management": {
        "--list_models": "list the servables under --model_repository_path and exit",
        "--add_to_config": "add --model_name/--model_path to --config_path's file and exit",
        "--remove_from_config": "remove --model_name from --config_path's file and exit",
    },
}


def help_text() -> str:
    """``ovmsx --help``: the serving flags, then the pull and config-management modes'."""
    parser = build_parser()
    for title, flags in _MODE_HELP.items():
        group = parser.add_argument_group(title)
        for flag, text in flags.items():
            if flag[2:] in _BARE:
                group.add_argument(flag, action="store_true", help=text)
            else:
                group.add_argument(flag, metavar="VALUE", help=text)
    return parser.format_help()


_BARE = {"pull", "overwrite_models", "list_models", "add_to_config", "remove_from_config"}


def _flag_or_path(text: str) -> bool | str:
    words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
    return words.get(text.strip().lower(), text)


def _check_exclusive(args: argparse.Namespace) -> None:
    pulling = bool(args.pull or args.source_model or args.task)
    add, remove = bool(args.add_to_config), bool(args.remove_from_config)
    if pulling and args.list_models:
        raise UsageError(
            "error parsing options - --list_models cannot be used with --pull or --task"
        )
    if pulling and remove:
        raise UsageError(
            "error parsing options - --remove_from_config cannot be used with --pull or --task"
        )
    if pulling and add:
        raise UsageError(
            "error parsing options - --add_to_config cannot be used with --pull or --task"
        )
    if add and args.list_models:
        raise UsageError(
            "error parsing options - --list_models cannot be used with --add_to_config"
        )
    if remove and args.list_models:
        raise UsageError(
            "error parsing options - --list_models cannot be used with --remove_from_config"
        )
    if add and remove:
        raise UsageError(
            "error parsing options - --add_to_config cannot be used with --remove_from_config"
        )
    if remove and args.model_path is not None:
        raise UsageError(
            "error parsing options - --model_path cannot be used with --remove_from_config"
        )


def _repository(args: argparse.Namespace) -> str | None:
    return args.model_repository_path or os.environ.get(REPOSITORY_ENV) or None


def _list_models(args: argparse.Namespace, rest: list[str]) -> OtherMode:
    repository = _repository(args)
    if repository is None:
        raise UsageError("Use --list_models with --model_repository_path")
    _check_server_flags(rest)
    return OtherMode(LIST_MODELS, repository=Path(repository))


def _config_edit(args: argparse.Namespace, rest: list[str]) -> OtherMode:
    adding = bool(args.add_to_config)
    value = args.add_to_config if adding else args.remove_from_config
    default = False
    if isinstance(value, str):
        config_path = value
    elif args.config_path is not None:
        config_path = args.config_path
    elif os.environ.get(REPOSITORY_ENV):
        config_path, default = os.path.join(os.environ[REPOSITORY_ENV], CONFIG_FILE), True
    else:
        raise UsageError("Set config_path with add_to_config/remove_from_config")
    if not args.model_name:
        raise UsageError(f"Set model_name with add_to_config/remove_from_config\n{_USAGE}")
    settings = {name: getattr(args, name) for name in OPTIONAL_FIELDS}
    _check_server_flags(rest)
    if not adding:
        given = [name for name, value in settings.items() if value is not None]
        if given:
            raise UsageError(
                "Adding or removing models from the configuration file, allows passing only "
                "model_name and model_path parameters. Invalid parameters passed: "
                + "".join(f"{name}, " for name in given)
            )
        return OtherMode(
            REMOVE_FROM_CONFIG,
            config_path=Path(config_path),
            default_config_path=default,
            model_name=args.model_name,
        )
    model_path = args.model_path
    repository = _repository(args)
    if model_path is None and repository is not None:
        model_path = os.path.join(repository, args.model_name)
    if model_path is None:
        raise UsageError(
            "Set model_name either with model_path or model_repository_path with add_to_config\n"
            + _USAGE
        )
    entry = ModelEntry(
        args.model_name, model_path, {k: v for k, v in settings.items() if v is not None}
    )
    return OtherMode(
        ADD_TO_CONFIG,
        config_path=Path(config_path),
        default_config_path=default,
        entry=entry,
    )


def _pull(args: argparse.Namespace, rest: list[str]) -> OtherMode:
    source = args.source_model
    if source is None and args.pull and args.model_path is None:
        source = args.model_name  # OVMS: --model_name names the source when it is the only name
    if not source:
        raise UsageError("source_model parameter is required for pull mode")
    repository = _repository(args)
    if repository is None:
        raise UsageError("model_repository_path parameter is required for pull mode")
    if args.task is not None and args.task not in TASKS:
        raise UsageError(f"error parsing options - --task parameter unsupported value: {args.task}")
    for flag, what in (("source_loras", "LoRA adapters"), ("vocoder", "a vocoder")):
        if getattr(args, flag) is not None:
            raise UsageError(
                f"--{flag}: ovmsx does not pull {what}; they belong to image_generation and "
                "text2speech models, whose graphs it does not write"
            )
    given_model_flags = [
        name for name in OPTIONAL_FIELDS if name not in ("target_device", "plugin_config")
        if getattr(args, name) is not None
    ]  # fmt: skip
    if given_model_flags or args.model_path is not None or args.config_path is not None:
        names = [*given_model_flags]
        names += [n for n in ("model_path", "config_path") if getattr(args, n) is not None]
        raise UsageError(
            "--" + ", --".join(names) + ": not used when pulling a model; the pulled folder is "
            "served through the graph.pbtxt written into it"
        )
    request = PullRequest(
        source_model=source,
        repository=Path(os.path.abspath(repository)),
        model_name=args.model_name,
        task=args.task,
        serve=not args.pull,
        gguf_filename=args.gguf_filename,
        overwrite_models=bool(args.overwrite_models),
        weight_format=args.weight_format,
        extra_quantization_params=args.extra_quantization_params,
        target_device=args.target_device,
        plugin_config=args.plugin_config,
        cache_dir=Path(os.path.abspath(args.cache_dir)) if args.cache_dir else None,
        flags=task_flags(args),
    )
    request.folder  # noqa: B018 - checks --source_model before anything is done
    if args.pull:
        _check_server_flags(rest)
        return OtherMode(PULL, pull=request)
    serve = [*rest, "--model_name", request.served_name, "--model_path", str(request.folder)]
    if args.cache_dir is not None:
        serve += ["--cache_dir", args.cache_dir]
    return OtherMode(PULL, pull=request, serve_argv=tuple(serve))


def _check_server_flags(rest: list[str]) -> None:
    """Refuse, as OVMS does, what is left when it is not only server flags (which OVMS accepts,
    and leaves unused, in the modes that do not serve)."""
    _, unknown = build_parser().parse_known_args(rest)
    if unknown:
        raise UsageError(
            "error parsing options - unmatched arguments: " + "".join(f"{u}, " for u in unknown)
        )
