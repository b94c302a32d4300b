"""A served model: its versions, which one answers by default, and how a request names one.

A model removed from the config stays here, its versions ended (``retired``): OVMS keeps
listing it, and a request for it gets OVMS's answer for a retired model.
"""

from __future__ import annotations

import re

from ovmsx.config.model_config import ModelConfig
from ovmsx.quoting import quote
from ovmsx.servables.model_version import ModelVersion, VersionState
from ovmsx.status import StatusCode, status_error

# OVMS parses the request's version strictly: digits, no sign games, no leading zeros.
_VERSION = re.compile(r"0|-?[1-9][0-9]*")


def parse_version(text: str) -> int:
    """The request's ``model_version``: "" and "0" mean the default version."""
    if text == "":
        return 0
    if not _VERSION.fullmatch(text) or abs(int(text)) >= 2**63:
        raise status_error(StatusCode.MODEL_VERSION_INVALID_FORMAT, f"version: {quote(text)!r}")
    return int(text)


class Model:
    def __init__(self, name: str, config: ModelConfig | None = None) -> None:
        self.name = name
        self.config = config
        """The config its versions were loaded with; None once removed from the config."""
        self.versions: dict[int, ModelVersion] = {}
        self.load_error: str | None = None  # why no version could even be listed
        # Why each failed version failed to load, by what its folder held then: a version is
        # tried again when its files change (or on a config reload), not on every poll.
        self.failed_folders: dict[int, object] = {}

    @property
    def retired(self) -> bool:
        return self.config is None

    def default_number(self) -> int | None:
        """The version requests without one get now, if any."""
        return max((v for v, mv in self.versions.items() if mv.available), default=None)

    def available_versions(self) -> list[int]:
        return sorted(v for v, mv in self.versions.items() if mv.available)

    def default_version(self) -> ModelVersion:
        """The highest AVAILABLE version (OVMS ``updateDefaultVersion``)."""
        newest = max((v for v, mv in self.versions.items() if mv.available), default=None)
        if newest is None:
            details = self.load_error or "; ".join(
                mv.status_line() for mv in self.versions.values()
            )
            raise status_error(StatusCode.MODEL_VERSION_MISSING, details or f"model {self.name}")
        return self.versions[newest]

    def version(self, number: int) -> ModelVersion:
        """Version ``number`` (0 = default) in whatever state it is, except that a version
        whose load failed counts as missing: OVMS never adds one to its model."""
        if number == 0:
            return self.default_version()
        found = self.versions.get(number)
        if found is None:
            raise status_error(
                StatusCode.MODEL_VERSION_MISSING, f"model {self.name} version {number}"
            )
        if found.error is not None:
            raise status_error(StatusCode.MODEL_VERSION_MISSING, found.status_line())
        return found

    def serving_version(self, number: int) -> ModelVersion:
        """Version ``number`` if it can answer now; OVMS's errors otherwise."""
        found = self.version(number)
        if found.available:
            return found
        if found.state >= VersionState.UNLOADING:
            raise status_error(StatusCode.MODEL_VERSION_NOT_LOADED_ANYMORE, found.status_line())
        raise status_error(StatusCode.MODEL_VERSION_NOT_LOADED_YET, found.status_line())
