"""Running the other modes: what they print and the exit code they end with.

``run_other_mode`` runs a parsed mode and returns its exit code: 0 when done, 64 for flags
refused (``UsageError``), 1 for a failure (``PullError``). What OVMS prints on stdout
(``Model: ... downloaded to: ...``, the list of servables, ``Config updated: ...``) goes to
``out``; errors go to ``err`` as ``ovmsx: <what went wrong>``.

``main`` is ``python -m ovmsx.pull``: the same modes from a command line, for use before the
``ovmsx`` command handles them itself. It serves nothing; a pull without ``--pull`` pulls, then
prints the ``ovmsx`` command that serves the result.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from typing import TextIO

from ovmsx.config.errors import EX_USAGE, UsageError
from ovmsx.pull.config_edit import add_to_config, remove_from_config
from ovmsx.pull.errors import PullError
from ovmsx.pull.hub import Hub
from ovmsx.pull.mode_args import (
    ADD_TO_CONFIG,
    LIST_MODELS,
    PULL,
    REMOVE_FROM_CONFIG,
    OtherMode,
    parse_other_mode,
)
from ovmsx.pull.model_pull import PullResult, pull_model
from ovmsx.pull.servables_list import list_servables


def run_other_mode(
    mode: OtherMode,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    hub: Hub | None = None,
) -> int:
    """Run ``mode`` (for a pull that goes on to serve: only the pull); its exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        _run(mode, out, hub)
    except UsageError as error:
        print(f"ovmsx: {error}", file=err)
        return EX_USAGE
    except PullError as error:
        print(f"ovmsx: {error}", file=err)
        return error.exit_code
    except KeyboardInterrupt:
        print("ovmsx: interrupted; run the same command again to continue", file=err)
        return 130
    finally:
        out.flush()
    return 0


def pull(mode: OtherMode, *, out: TextIO | None = None, hub: Hub | None = None) -> PullResult:
    """The pull of ``mode`` (raises ``UsageError``/``PullError`` rather than printing them)."""
    assert mode.kind == PULL
    assert mode.pull is not None
    return pull_model(mode.pull, hub=hub, out=out)


def _run(mode: OtherMode, out: TextIO, hub: Hub | None) -> None:
    if mode.kind == PULL:
        pull(mode, out=out, hub=hub)
    elif mode.kind == LIST_MODELS:
        assert mode.repository is not None
        print("Listing models in repository...", file=out)
        print(f"Model repository path: {mode.repository}", file=out)
        if not mode.repository.is_dir():
            raise PullError(f"Path is not a directory: {mode.repository}")
        for name in list_servables(mode.repository):
            print(name, file=out)
    elif mode.kind in (ADD_TO_CONFIG, REMOVE_FROM_CONFIG):
        assert mode.config_path is not None
        if mode.default_config_path:
            print(f"Using default config path: {mode.config_path}", file=out)
        if mode.kind == ADD_TO_CONFIG:
            assert mode.entry is not None
            file = add_to_config(mode.config_path, mode.entry)
        else:
            assert mode.model_name is not None
            file = remove_from_config(mode.config_path, mode.model_name)
        print(f"Config updated: {file}", file=out)
    else:  # pragma: no cover - parse_other_mode makes no other kind
        raise AssertionError(mode.kind)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ovmsx.pull [ovms flags]``: run a pull or config-management command line."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        mode = parse_other_mode(argv)
    except UsageError as error:
        print(f"ovmsx: {error}", file=sys.stderr)
        return EX_USAGE
    if mode is None:
        print(
            "ovmsx: nothing to do: give --pull with --source_model and --model_repository_path, "
            "--list_models, --add_to_config or --remove_from_config",
            file=sys.stderr,
        )
        return EX_USAGE
    code = run_other_mode(mode)
    if code == 0 and mode.serve_argv is not None:
        print("To serve it: ovmsx " + shlex.join(mode.serve_argv))
    return code
