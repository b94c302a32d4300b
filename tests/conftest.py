"""Tests run against the installed (or editable) ovmsx, never a source tree without _core."""

import pytest

try:
    import ovmsx._core  # noqa: F401
except ModuleNotFoundError as missing:
    raise pytest.UsageError(
        "ovmsx._core is not importable: the tests found a source tree without the compiled core. "
        "Install first (pip install '.[test]') and run `pytest`, not `python -m pytest`, "
        "from the project root."
    ) from missing
