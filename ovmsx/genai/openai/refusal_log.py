"""Refused ``/v3`` requests in the log at INFO: status, path and reason, so an operator sees why
a client failed without turning on debug logging. At most ``PER_SECOND`` lines a second: a
flood of bad requests cannot fill a disk; the lines left out are counted in the next one.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("ovmsx.v3")

PER_SECOND = 10


class RefusalLog:
    def __init__(self, per_second: int = PER_SECOND) -> None:
        self._per_second = per_second
        self._second = 0
        self._logged = 0
        self._skipped = 0

    def refused(self, status: int, method: str, path: str, message: str) -> None:
        if not log.isEnabledFor(logging.INFO):
            return
        second = int(time.monotonic())
        if second != self._second:
            self._second, self._logged = second, 0
        if self._logged >= self._per_second:
            self._skipped += 1
            return
        self._logged += 1
        skipped, self._skipped = self._skipped, 0
        more = f" ({skipped} more refusals not logged)" if skipped else ""
        one_line = " ".join(message.split())  # MediaPipe's messages hold a line break
        log.info("Refused %s %s: %d %s%s", method, path, status, one_line, more)
