"""The body of ``GET /v1/config`` (and of a successful ``POST /v1/config/reload``).

OVMS builds this text by hand and its tests compare it byte for byte, so it is built the same
way here: servables sorted byte-wise by name, each with its versions ascending, ``version`` as a
string, ``error_message`` equal to the error code's name. Every model is listed, retired (END)
and failed ones included; pipelines and graphs have the one version ``"1"``. Names are
JSON-escaped (OVMS writes them raw, which only differs for names holding ``"`` or ``\\``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ovmsx.servables.model_version import VersionState

if TYPE_CHECKING:
    from ovmsx.servables.registry import ServableRegistry

# (version, state name, error code name)
VersionStatus = tuple[int, str, str]


def statuses(registry: ServableRegistry) -> dict[str, list[VersionStatus]]:
    """Every servable's version statuses, by name."""
    found: dict[str, list[VersionStatus]] = {}
    for name, model in registry.models.items():
        found[name] = [
            (number, version.state.name, version.error_code)
            for number, version in sorted(model.versions.items())
        ]
    # A pipeline's or graph's own state, as OVMS reports a definition's (its one version "1").
    for kind in (registry.pipelines, registry.graphs):
        for name, definition in kind.items():
            found[name] = [(1, _reported_state(definition.state), definition.error_code)]
    return found


def _reported_state(state: VersionState) -> str:
    """OVMS's mapping from a definition's state to a version state: not yet loaded (or
    failed) is LOADING, retired is END."""
    if state in (VersionState.START, VersionState.LOADING):
        return VersionState.LOADING.name
    if state in (VersionState.UNLOADING, VersionState.END):
        return VersionState.END.name
    return VersionState.AVAILABLE.name


def status_json(registry: ServableRegistry) -> bytes:
    return render(statuses(registry)).encode()


def render(by_name: dict[str, list[VersionStatus]]) -> str:
    if not by_name:
        return "{}"
    blocks = []
    for name in sorted(by_name, key=lambda n: n.encode()):
        head = f"{_quoted(name)} : \n{{\n " + '"model_version_status": ['
        versions = by_name[name]
        if not versions:
            blocks.append(head + "]\n}")
            continue
        entries = ",\n".join(_version(*status) for status in versions)
        blocks.append(f"{head}\n{entries}\n ]\n}}")
    return "{\n" + ",\n".join(blocks) + "\n}"


def _version(number: int, state: str, code: str) -> str:
    return (
        "  {\n"
        f'   "version": "{number}",\n'
        f'   "state": "{state}",\n'
        '   "status": {\n'
        f'    "error_code": "{code}",\n'
        f'    "error_message": {_quoted(code)}\n'
        "   }\n"
        "  }"
    )


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
