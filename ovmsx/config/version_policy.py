"""``model_version_policy``: which of a model's version folders are served.

The JSON form holds exactly one of ``{"all": {}}``, ``{"specific": {"versions": [1, 3]}}`` or
``{"latest": {"num_versions": 2}}``; without one, OVMS serves the latest version only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from ovmsx.config.strict_model import STRICT


class AllVersions(BaseModel):
    """Serve every version found (``{"all": {}}``; the object takes no keys)."""

    model_config = STRICT


class SpecificVersions(BaseModel):
    """Serve the listed versions that exist."""

    model_config = STRICT

    versions: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1)]
    """Version numbers to serve, each at least 1."""


class LatestVersions(BaseModel):
    """Serve the highest ``num_versions`` versions found."""

    model_config = STRICT

    num_versions: Annotated[int, Field(ge=1)]
    """How many of the highest versions to serve."""


class VersionPolicy(BaseModel):
    """Exactly one of ``all``, ``specific``, ``latest``; ``select`` applies it."""

    model_config = STRICT

    all: AllVersions | None = None
    """Set for ``{"all": {}}``."""
    specific: SpecificVersions | None = None
    """Set for ``{"specific": {"versions": [...]}}``."""
    latest: LatestVersions | None = None
    """Set for ``{"latest": {"num_versions": n}}``."""

    @model_validator(mode="after")
    def _exactly_one(self) -> VersionPolicy:
        chosen = [n for n in ("all", "specific", "latest") if getattr(self, n) is not None]
        if len(chosen) != 1:
            raise ValueError(
                "a version policy holds exactly one of 'all', 'specific', 'latest'"
                + (f"; found {', '.join(chosen)}" if chosen else "")
            )
        return self

    @classmethod
    def default(cls) -> VersionPolicy:
        """OVMS's default: the latest version only."""
        return cls(latest=LatestVersions(num_versions=1))

    @property
    def kind(self) -> Literal["all", "specific", "latest"]:
        """Which policy this is."""
        if self.all is not None:
            return "all"
        return "specific" if self.specific is not None else "latest"

    def select(self, available: Iterable[int]) -> list[int]:
        """The versions to serve out of ``available``, ascending.

        Numbers below 1 are never versions (OVMS only loads positive folder names) and
        repeats count once. ``specific`` versions that are not available are left out;
        whoever loads the model decides how to report them.
        """
        found = sorted({v for v in available if v >= 1})
        if self.specific is not None:
            wanted = set(self.specific.versions)
            return [v for v in found if v in wanted]
        if self.latest is not None:
            return found[-self.latest.num_versions :]
        return found
