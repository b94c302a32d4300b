"""The download progress bar: huggingface_hub's own, shown only when stdout is a terminal.

huggingface_hub decides by itself from stderr and its environment variables; ``ovms`` output
is read from stdout, so a run whose stdout goes to a file or a pipe (a service, a container
log, a test) gets no bar at all, whatever stderr is.
"""

from __future__ import annotations

import sys

from huggingface_hub.utils import tqdm as hub_tqdm


class TerminalOnlyBar(hub_tqdm):
    """``huggingface_hub.utils.tqdm``, disabled unless stdout is a TTY."""

    def __init__(self, *args, **kwargs):
        if not _stdout_is_terminal():
            kwargs["disable"] = True
        super().__init__(*args, **kwargs)


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdout
        return False
