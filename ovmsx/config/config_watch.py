"""The file poller (``--file_system_poll_wait_seconds``; 0 turns it off): every period, one
cycle of the config service (reload the config file if its MD5 changed, else rescan version
folders and graph files).

It runs on the event loop as one task; the cycle reads and hashes files in worker threads and
compiles in worker threads, so requests keep being answered meanwhile. A cycle that fails (a
bug) is logged and the next one runs as usual.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger("ovmsx.config")


class ConfigWatcher:
    def __init__(self, cycle: Callable[[], Awaitable[None]], seconds: float) -> None:
        self._cycle = cycle
        self._seconds = seconds
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Start polling (after the first load, as OVMS starts its watcher); no-op for 0 s."""
        if self._seconds > 0 and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
            log.info("Started model manager thread (polling every %g s)", self._seconds)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._seconds)
            try:
                await self._cycle()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("config poll failed")
