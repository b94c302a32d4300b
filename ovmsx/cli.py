"""The ``ovmsx`` command: the ``ovms`` binary's flags, its exit codes, then the server."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Sequence

# Read by grpcio when it is imported, below. ovmsx starts its children (workers, LLM engines)
# with fork and exec; gRPC's fork handlers serve children that go on using gRPC without an
# exec, and with the server's threads running they only print "skipping fork() handlers".
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

from ovmsx import __version__, _core, log_format
from ovmsx.config.cli_options import ServerOptions, parse_options
from ovmsx.config.config_source import read_servables
from ovmsx.config.errors import EX_USAGE, ConfigError, UsageError
from ovmsx.config.servables import Servables
from ovmsx.metrics.settings import MetricsConfigError, MetricsSettings, metrics_settings
from ovmsx.openvino_devices import available_devices
from ovmsx.worker_role import WorkerRole, take_role

EX_FAILURE = 1

log = logging.getLogger("ovmsx.server")


def _configure_logging(
    options: ServerOptions, role: WorkerRole | None, held: Sequence[logging.LogRecord] = ()
) -> None:
    """OVMS's line format on stdout (and ``--log_path``); see ovmsx/log_format.py. Raises
    ``OSError`` when the log file cannot be opened."""
    # With --grpc_workers N, N processes write to the same log: each line says whose it is.
    process = "" if options.grpc_workers == 1 else _process_name(role)
    log_format.configure(options.log_level, options.log_path, process, held)


def _log_versions() -> None:
    # The first lines OVMS logs, in its words (ServerMetadata names the server the same way).
    log.info("OpenVINO Model Server %s (ovmsx)", __version__)
    log.info("OpenVINO backend %s", _core.openvino_version())
    try:
        devices = ", ".join(available_devices())
    except OSError as error:
        devices = f"unknown ({error})"
    logging.getLogger("ovmsx.models").info("Available devices for Open VINO: %s", devices)


def _other_mode(argv: list[str]):
    """OVMS's pull and config-management modes (ovmsx/pull), or None for a serving command
    line; telling them apart does not import huggingface_hub."""
    from ovmsx.pull.mode_args import parse_other_mode

    return parse_other_mode(argv)


def _process_name(role: WorkerRole | None) -> str:
    return "supervisor" if role is None else f"worker {role.index} pid {os.getpid()}"


def main(argv: Sequence[str] | None = None) -> int:
    role = take_role()
    if role is not None:
        role.die_with_supervisor()
    argv = sys.argv[1:] if argv is None else list(argv)
    other = None
    held = log_format.HeldRecords()
    if role is None and {"-h", "--help"} & set(argv):  # whatever mode the other flags ask
        from ovmsx.pull.mode_args import help_text

        print(help_text(), end="")
        return 0
    try:
        if role is None:  # workers get the serving command line, without the pull's flags
            other = _other_mode(argv)
            if other is not None and other.serve_argv is None:
                from ovmsx.pull.cli import run_other_mode

                return run_other_mode(other)
            if other is not None:
                argv = list(other.serve_argv)
        with held:  # warnings about flags wait for the log to be set up
            options = parse_options(argv)
    except UsageError as error:
        print(f"ovmsx: {error}", file=sys.stderr)
        return EX_USAGE
    # The LLM engines' clients, in this process and in the workers, read their bounds there.
    options.engine_limits.export()
    if options.version:
        print(f"ovmsx {__version__}")
        print(f"OpenVINO backend {_core.openvino_version()}")
        return 0
    if other is not None:
        # A pull that goes on to serve: the server's flags were checked above, before the
        # download, as OVMS checks them.
        from ovmsx.pull.cli import run_other_mode

        code = run_other_mode(other)
        if code:
            return code
    try:
        _configure_logging(options, role, held.records)
    except OSError as error:
        print(f"ovmsx: --log_path {options.log_path}: {error.strerror}", file=sys.stderr)
        return EX_USAGE
    _log_versions()
    try:
        read = read_servables(options)
        assert read.servables is not None  # read_servables raises instead
        metrics = metrics_settings(options, read.monitoring)
    except (ConfigError, UsageError, MetricsConfigError) as error:
        logging.getLogger("ovmsx.config").error("%s", error)
        return EX_USAGE if isinstance(error, UsageError) else EX_FAILURE
    if options.grpc_workers > 1 and role is None:
        # The config was checked above, once: a bad one stops here, before any worker starts.
        from ovmsx.workers import supervise

        return supervise(options, argv)
    code = asyncio.run(serve_options(options, read.servables, role, metrics, read.md5))
    _report_leftover_threads()
    return code


def _report_leftover_threads() -> None:
    """Every thread ovmsx starts must have ended by now: CPython ends a thread that asks for the
    GIL while the interpreter finalizes, and one caught inside a C++ call (OpenVINO inference
    with the GIL released) takes the process down with ``terminate called ...``."""
    leftover = [
        t.name
        for t in threading.enumerate()
        # Unnamed executors belong to libraries (ovmsx names its own): `import openvino` starts
        # one for its telemetry. Python joins executor threads before it finalizes.
        if t is not threading.main_thread() and not t.name.startswith("ThreadPoolExecutor-")
    ]
    if leftover:
        logging.getLogger("ovmsx.server").error(
            "threads still running at exit: %s", ", ".join(leftover)
        )


async def serve_options(
    options: ServerOptions,
    servables: Servables,
    role: WorkerRole | None = None,
    metrics: MetricsSettings | None = None,
    config_md5: str | None = None,
) -> int:
    from ovmsx.server import serve  # grpc is imported only when a server runs

    return await serve(options, servables, role, metrics, config_md5)


if __name__ == "__main__":
    sys.exit(main())
