"""The config of a running server: ``GET /v1/config``, ``POST /v1/config/reload``, the file
poller's cycle and SIGHUP, with OVMS's rules (COMPAT.md §15).

- The config file is known by the MD5 of its bytes. A reload reads it again only when the MD5
  changed, or when the last load failed (the reload API tries a failed load again; the poller
  does not, so an unchanged broken file is not reported every second).
- A file that is not valid JSON, or not a valid config, changes nothing: the servables keep
  serving as they were, the log says why, and the API answers with the error.
- One entry that fails (a model that does not load, a pipeline that does not validate) fails
  alone; the first failure is the API's answer (its HTTP code), the rest still applies.
- Between config changes, version folders are scanned again and graph files checked, and the
  folders of ``model_config_list`` looked at again: one that gained (or lost) a
  ``graph.pbtxt`` is served as a graph (or a model) from then on (``graph_folders``).
- In single-model mode there is no file: a reload only scans the folders.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ovmsx.config.config_source import ConfigRead, file_md5, read_config, reexamine_folders
from ovmsx.config.servables import Servables
from ovmsx.servables.config_status import status_json
from ovmsx.status import StatusCode, StatusError, render, status_error

if TYPE_CHECKING:
    from ovmsx.config.cli_options import ServerOptions
    from ovmsx.servables.registry import ServableRegistry
    from ovmsx.worker_role import WorkerRole

log = logging.getLogger("ovmsx.config")

NOT_FOUND = "Config file not found or cannot open."
RELOAD_FAILED = "Reloading config file failed. Check server logs for more info."
VERSIONS_FAILED = "Reloading models versions failed. Check server logs for more info."
# OVMS's HTTP map differs from its gRPC-derived default for this one (src/http_server.cpp).
_HTTP_OVERRIDES = {StatusCode.PATH_INVALID: 400}


def error_body(message: str, details: str | None = None) -> bytes:
    """OVMS's hand-written error body for these endpoints; beyond OVMS, ``details`` says what
    failed (the first failure's message) without a trip to the log."""
    text = '{\n\t"error": ' + json.dumps(message, ensure_ascii=False)
    if details:
        text += ',\n\t"details": ' + json.dumps(details, ensure_ascii=False)
    return (text + "\n}").encode()


def http_status(error: StatusError) -> int:
    return _HTTP_OVERRIDES.get(error.code, error.http_status)


class ConfigService:
    """Implements the REST frontend's ``ConfigApi``; also what the poller and SIGHUP call."""

    def __init__(
        self,
        registry: ServableRegistry,
        path: Path | None,
        servables: Servables,
        md5: str | None,
        on_api_reload: Callable[[], None] | None = None,
    ) -> None:
        self._registry = registry
        self._path = path
        self._servables = servables  # the last config that loaded
        self._md5 = md5  # of the last config file read, even one that failed
        self._last_error: StatusError | None = None  # of the last config load, if it failed
        self._config_broken = False  # the last file read could not be parsed
        self._missing_reported = False
        self._on_api_reload = on_api_reload
        self._lock = asyncio.Lock()
        self._signalled: set[asyncio.Task] = set()

    @classmethod
    def for_options(
        cls,
        options: ServerOptions,
        registry: ServableRegistry,
        servables: Servables,
        md5: str | None,
        role: WorkerRole | None,
    ) -> ConfigService:
        """The service of a server started with ``options``; in a ``--grpc_workers`` process,
        a reload through the API makes the other processes reload too."""
        path = None if options.config_path is None else Path(options.config_path)
        notify = None if role is None else role.ask_all_to_reload
        return cls(registry, path, servables, md5, notify)

    # -- ConfigApi ---------------------------------------------------------------------------

    async def status(self) -> tuple[int, bytes]:
        return 200, status_json(self._registry)

    async def reload(self) -> tuple[int, bytes]:
        try:
            return await self._reload()
        finally:
            if self._on_api_reload is not None:
                self._on_api_reload()  # other serving processes reload as well

    # -- the first load, the poller, SIGHUP --------------------------------------------------

    async def load_initial(self) -> None:
        """The startup load; the server is ready once it returns, whatever failed in it."""
        async with self._lock:
            outcome = await self._registry.updates.apply(self._servables, retry=True)
            self._last_error = outcome.errors[0] if outcome.errors else None
            self._registry.initial_load_done = True

    async def catch_up(self) -> None:
        """Load the file if it changed since it was read at start (a serving process that
        started while it was being edited); nothing else."""
        async with self._lock:
            if self._path is not None:
                md5 = await asyncio.to_thread(file_md5, self._path)
                if md5 is not None and md5 != self._md5:
                    await self._load_config()

    async def poll(self) -> None:
        """One poller cycle: reload the file if its MD5 changed, else rescan the version
        folders and graph files."""
        async with self._lock:
            if self._path is not None:
                md5 = await asyncio.to_thread(file_md5, self._path)
                self._report_missing(md5 is None)
                if md5 is not None and md5 != self._md5:
                    await self._load_config()
                    return  # a load scans everything a rescan would
            await self._rescan()

    def reload_on_signal(self) -> None:
        """SIGHUP (beyond OVMS; how the serving processes of ``--grpc_workers`` reload
        together): the reload the API would do, its outcome logged."""
        task = asyncio.get_running_loop().create_task(self._reload_signalled())
        self._signalled.add(task)
        task.add_done_callback(self._signalled.discard)

    async def close(self) -> None:
        for task in list(self._signalled):
            task.cancel()
        await asyncio.gather(*self._signalled, return_exceptions=True)

    # -- the steps ----------------------------------------------------------------------------

    async def _reload(self) -> tuple[int, bytes]:
        async with self._lock:
            if self._path is not None:
                md5 = await asyncio.to_thread(file_md5, self._path)
                if md5 is None:
                    log.error("%s %s", NOT_FOUND, self._path)
                    return 500, error_body(NOT_FOUND)
                if md5 != self._md5 or self._last_error is not None:
                    error = await self._load_config()
                    if error is not None:
                        return http_status(error), error_body(RELOAD_FAILED, error.message)
                    return 200, status_json(self._registry)
            errors = await self._rescan()
            if errors:
                return http_status(errors[0]), error_body(VERSIONS_FAILED, errors[0].message)
            return 200, status_json(self._registry)

    async def _reload_signalled(self) -> None:
        log.info("SIGHUP: reloading the configuration")
        code, body = await self._reload()
        if code != 200:
            log.error("reload on SIGHUP failed: %s", body.decode())

    async def _load_config(self) -> StatusError | None:
        """Read the file and apply it; the first failure, if any."""
        assert self._path is not None
        log.info("Loading configuration from %s", self._path)
        read = await asyncio.to_thread(read_config, self._path)
        self._md5 = read.md5  # kept even when the file is broken: the poller waits for a change
        if read.error is not None or read.servables is None:
            self._config_broken = True
            self._last_error = _read_error(read)
            log.error("%s", read.describe_failure())
            return self._last_error
        self._config_broken = False
        self._servables = read.servables
        outcome = await self._registry.updates.apply(read.servables, retry=True)
        self._last_error = outcome.errors[0] if outcome.errors else None
        if self._last_error is not None:
            log.error("Loading the configuration failed in part: %s", self._last_error.message)
        return self._last_error

    async def _rescan(self) -> list[StatusError]:
        """Version folders and graph files, against the config last loaded."""
        updates = self._registry.updates
        refolded = await asyncio.to_thread(reexamine_folders, self._servables)
        if refolded is not None:
            self._servables = refolded
        servables = self._servables
        prints = await updates.fingerprints(servables.graphs)
        changed = updates.graph_files_changed(prints)
        if changed and self._path is not None and not self._config_broken:
            # A graph's subconfig may have changed its models: read the config again.
            read = await asyncio.to_thread(read_config, self._path)
            if read.servables is not None and read.md5 == self._md5:
                servables = self._servables = read.servables
                prints = await updates.fingerprints(servables.graphs)
        outcome = await updates.apply(servables, retry=False, fingerprints=prints)
        return outcome.errors

    def _report_missing(self, missing: bool) -> None:
        if missing and not self._missing_reported:
            log.error("%s %s", NOT_FOUND, self._path)
        self._missing_reported = missing


def _read_error(read: ConfigRead) -> StatusError:
    error = read.error
    assert error is not None
    code = error.status or StatusCode.FILE_INVALID
    details = str(error)
    if read.not_json:
        # A JSON syntax error's text already quotes OVMS's words ("config.json: line 2 column 1:
        # The file is not valid json - Expecting value"), as the start-up message shows it; the
        # status puts them first, so they are not said twice.
        details = details.replace(f"{render(code)} - ", "", 1)
    return status_error(code, details)
