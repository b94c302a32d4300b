"""OVMS's rule for paths that climb (``FileSystem::isPathEscaped`` applied to the path joined to
the config file's folder): a ``..`` component anywhere; names that merely hold two dots pass."""

from __future__ import annotations

import pytest

from ovmsx.config.path_escape import escapes


@pytest.mark.parametrize(
    "path", ["..", "../m", "models/../m", "models/..", "/opt/models/../m", "/opt/..", "a/../../b"]
)
def test_a_dot_dot_component_climbs(path: str) -> None:
    assert escapes(path)


@pytest.mark.parametrize(
    "path", ["models/m", "/opt/models/m", "..m", "m..", "models/..resnet/", "models/resnet../", "."]
)
def test_names_with_two_dots_do_not(path: str) -> None:
    assert not escapes(path)
