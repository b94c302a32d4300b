"""Parameter types from a request's ``tools``, for parsers whose models write argument values as
bare text (qwen3coder): the declared JSON type tells a string from a number or an object."""

from __future__ import annotations

from collections.abc import Iterable

# A property without a usable "type" (anyOf, enum only, ...): take the value as JSON when it is
# JSON, else as a string.
ANY = "any"


def parameter_types(tools: Iterable[dict] | None) -> dict[str, dict[str, str]]:
    """``{function name: {parameter: JSON type}}`` for the function tools given, in either the
    Chat Completions form (``{"type": "function", "function": {...}}``) or the flat one."""
    types: dict[str, dict[str, str]] = {}
    for tool in tools or ():
        if not isinstance(tool, dict):
            continue
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = function.get("name")
        if not isinstance(name, str):
            continue
        schema = function.get("parameters")
        properties = schema.get("properties") if isinstance(schema, dict) else None
        types[name] = {
            param: _json_type(spec)
            for param, spec in (properties.items() if isinstance(properties, dict) else ())
        }
    return types


def _json_type(spec: object) -> str:
    declared = spec.get("type") if isinstance(spec, dict) else None
    if isinstance(declared, list):
        declared = next((t for t in declared if isinstance(t, str) and t != "null"), None)
    return declared if isinstance(declared, str) else ANY
