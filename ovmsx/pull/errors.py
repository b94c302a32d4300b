"""How the pull and config-management modes fail, and the exit code each failure gets.

Bad flags raise ``ovmsx.config.errors.UsageError`` (exit 64, ``EX_USAGE``, as ``ovms`` uses for
options it refuses). Everything that goes wrong once the flags are accepted (the hub cannot be
reached, the repository is missing, the disk refuses a write, a config file cannot be edited)
raises ``PullError``: exit 1, OVMS's ``OVMS_EX_FAILURE`` for a failed start of a module.
"""

from __future__ import annotations

EX_FAILURE = 1
"""Exit code of a mode that was asked for correctly but failed."""


class PullError(Exception):
    """A pull, listing or config edit that failed; ``str(error)`` says what and what to do."""

    exit_code = EX_FAILURE
