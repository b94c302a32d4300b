"""The ``ovmsx`` command: the ``ovms`` binary's flags, its exit codes, then the server."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Sequence

from ovmsx import __version__, _core
from ovmsx.config.cli_options import ServerOptions, parse_options
from ovmsx.config.errors import EX_USAGE, ConfigError, UsageError
from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.config.model_config import ModelConfig
from ovmsx.config.servables import Servables
from ovmsx.config.server_config import load_config, load_subconfig
from ovmsx.worker_role import WorkerRole, take_role

EX_FAILURE = 1

# OVMS's TRACE has no Python level; it logs like DEBUG.
_LOG_LEVELS = {"TRACE": logging.DEBUG, "DEBUG": logging.DEBUG, "INFO": logging.INFO,
               "WARNING": logging.WARNING, "ERROR": logging.ERROR}  # fmt: skip


def _configure_logging(options: ServerOptions, role: WorkerRole | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if options.log_path is not None:
        handlers.append(logging.FileHandler(options.log_path))
    # With --grpc_workers N, N processes write to the same log: each line says whose it is.
    process = "" if options.grpc_workers == 1 else f"[{_process_name(role)}]"
    logging.basicConfig(
        level=_LOG_LEVELS[options.log_level],
        format=f"[%(asctime)s][%(levelname)s]{process}[%(name)s] %(message)s",
        handlers=handlers,
    )


def _process_name(role: WorkerRole | None) -> str:
    return "supervisor" if role is None else f"worker {role.index} pid {os.getpid()}"


def _servables(options: ServerOptions) -> Servables:
    single = options.single_model_config()
    if single is not None:
        return Servables(models=[single])
    assert options.config_path is not None  # parse_options requires one of the two
    config = load_config(options.config_path)
    return Servables(
        models=[*config.models, *_subconfig_models(config.graphs, config.models)],
        graphs=config.graphs,
        pipelines=config.pipelines,
        libraries=config.libraries,
    )


def _subconfig_models(
    graphs: Sequence[MediapipeConfig], models: Sequence[ModelConfig]
) -> list[ModelConfig]:
    """Models from the graphs' subconfig files, served like any other (first name wins).

    A broken subconfig is logged and skipped: it costs its own models, not the server.
    """
    taken = {model.name for model in models}
    found = []
    for graph in graphs:
        path = None if graph.is_remote else graph.subconfig_file
        if path is None:
            continue
        try:
            subconfig = load_subconfig(path)
        except ConfigError as error:
            logging.getLogger("ovmsx.config").error("graph %s: %s", graph.name, error)
            continue
        for model in subconfig:
            if model.name not in taken:
                taken.add(model.name)
                found.append(model)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    role = take_role()
    if role is not None:
        role.die_with_supervisor()
    try:
        options = parse_options(argv)
    except UsageError as error:
        print(f"ovmsx: {error}", file=sys.stderr)
        return EX_USAGE
    if options.version:
        print(f"ovmsx {__version__}")
        print(f"OpenVINO backend {_core.openvino_version()}")
        return 0
    if options.port == 0:
        # OVMS serves REST on --rest_port alone; ovmsx has no REST frontend yet.
        print("ovmsx: set --port: this release serves KServe over gRPC only", file=sys.stderr)
        return EX_USAGE
    _configure_logging(options, role)
    try:
        servables = _servables(options)
    except (ConfigError, UsageError) as error:
        logging.getLogger("ovmsx.config").error("%s", error)
        return EX_USAGE if isinstance(error, UsageError) else EX_FAILURE
    if options.grpc_workers > 1 and role is None:
        # The config was checked above, once: a bad one stops here, before any worker starts.
        from ovmsx.workers import supervise

        return supervise(options, sys.argv[1:] if argv is None else argv)
    code = asyncio.run(serve_options(options, servables, role))
    _report_leftover_threads()
    return code


def _report_leftover_threads() -> None:
    """Every thread ovmsx starts must have ended by now: CPython ends a thread that asks for the
    GIL while the interpreter finalizes, and one caught inside a C++ call (OpenVINO inference
    with the GIL released) takes the process down with ``terminate called ...``."""
    leftover = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if leftover:
        logging.getLogger("ovmsx.server").error(
            "threads still running at exit: %s", ", ".join(leftover)
        )


async def serve_options(
    options: ServerOptions, servables: Servables, role: WorkerRole | None = None
) -> int:
    from ovmsx.server import serve  # grpc is imported only when a server runs

    return await serve(options, servables, role)


if __name__ == "__main__":
    sys.exit(main())
