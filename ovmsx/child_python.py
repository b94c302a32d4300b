"""The command line of a Python child process ovmsx starts (workers, LLM engines).

``python -m pkg.mod`` and ``python -c ...`` put the current folder first on ``sys.path``. Run
from a source checkout (as the README's commands are), that folder's ``ovmsx/`` has no compiled
``_core``, and the child would import it instead of the installed package the server runs. So
the child drops that first entry before it imports anything of ovmsx's.
"""

from __future__ import annotations

import sys


def python_command(module: str, function: str, *args: str) -> list[str]:
    """Run ``module.function()`` in a new interpreter, which exits with what it returns;
    ``args`` follow in ``sys.argv`` (``sys.argv[0]`` is ``-c``)."""
    bootstrap = (
        f"import sys; del sys.path[0]; from {module} import {function}; sys.exit({function}())"
    )
    return [sys.executable, "-c", bootstrap, *args]
