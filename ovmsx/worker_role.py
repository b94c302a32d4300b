"""What a serving process started by the ``--grpc_workers`` supervisor (ovmsx/workers.py) knows
about its place: its index, when it may load, and where to say that it is ready.

The supervisor passes the role in one environment variable rather than a flag, so that the
workers' command line stays the user's own; a worker removes the variable at once, so that
nothing it starts (a Python node's subprocess, say) mistakes itself for a worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
from dataclasses import dataclass

ENVIRONMENT = "OVMSX_WORKER"
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@dataclass(frozen=True)
class WorkerRole:
    index: int
    """0 for the first worker: it binds the port and loads at once, as a single server does;
    the others load once it has (importing its compiled models from the model cache), and bind
    only once they have loaded."""
    ready_fd: int
    """The write end of the supervisor's pipe: one line with the index when loading is done."""
    go_fd: int
    """The read end of the pipe the supervisor closes once worker 0 has loaded; -1 for it."""
    supervisor: int
    """The supervisor's process id."""

    @property
    def binds_before_loading(self) -> bool:
        return self.index == 0

    def to_environment(self) -> dict[str, str]:
        return {ENVIRONMENT: f"{self.index},{self.ready_fd},{self.go_fd},{self.supervisor}"}

    async def first_worker_loaded(self, stop: asyncio.Event) -> None:
        """Return once worker 0 has loaded (at once for worker 0 itself) or ``stop`` is set."""
        if self.go_fd < 0:
            return
        loop = asyncio.get_running_loop()
        closed = loop.create_future()
        loop.add_reader(self.go_fd, lambda: closed.done() or closed.set_result(None))
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait((closed, stopping), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            loop.remove_reader(self.go_fd)
            os.close(self.go_fd)

    def report_ready(self) -> None:
        """Tell the supervisor this worker serves; once only (the pipe end is closed here)."""
        try:
            os.write(self.ready_fd, f"{self.index}\n".encode())
            os.close(self.ready_fd)
        except OSError:
            pass  # the supervisor is gone; die_with_supervisor has stopped us or will

    def ask_all_to_reload(self) -> None:
        """A reload came through this worker's API: the supervisor relays SIGHUP to every
        worker, so that all of them serve the same config (each reloads on SIGHUP)."""
        # If the supervisor is gone, die_with_supervisor has stopped us or will.
        with contextlib.suppress(OSError):
            os.kill(self.supervisor, signal.SIGHUP)

    def die_with_supervisor(self) -> None:
        """Ask the kernel to send SIGTERM when the supervisor dies, so a killed supervisor
        (SIGKILL, the OOM killer) leaves no workers serving its port on their own."""
        if not sys.platform.startswith("linux"):
            return  # prctl is Linux's; elsewhere a killed supervisor leaves its workers
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != self.supervisor:  # it died before the request took effect
            os.kill(os.getpid(), signal.SIGTERM)


def take_role() -> WorkerRole | None:
    """This process's role, removed from the environment; ``None`` outside a supervisor."""
    value = os.environ.pop(ENVIRONMENT, None)
    if value is None:
        return None
    index, ready_fd, go_fd, supervisor = (int(part) for part in value.split(","))
    return WorkerRole(index, ready_fd, go_fd, supervisor)
