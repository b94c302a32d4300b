"""openvino-genai's exception texts, reworded for a client.

Its checks raise ``Check '<condition>' failed at <build path>/<file>.cpp:<line>:`` followed by the
reason on the next line, and errors passed up from OpenVINO or XGrammar start with ``Exception
from <path>:<line>:`` or ``[hh:mm:ss] <path>.cc:<line>: ``. A client gets the reason alone: the
build machine's paths say nothing to it.
"""

from __future__ import annotations

import re

_CHECK = re.compile(r"Check '.*?' failed at \S+?:\d+:\s*", re.DOTALL)
_FROM = re.compile(r"Exception from \S+?:\d+:\s*")
_SOURCE = re.compile(r"^(?:\[[\d:]+\] )?\S+\.(?:cc|cpp|h|hpp):\d+: ", re.MULTILINE)


def genai_message(error: BaseException) -> str:
    """The reason ``error`` gives, without source locations; its first line when the rest is a
    trace."""
    text = _SOURCE.sub("", _FROM.sub("", _CHECK.sub("", str(error)))).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
