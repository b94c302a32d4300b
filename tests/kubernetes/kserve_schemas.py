"""KServe's resource schemas (the CRDs in ``crds/``) as JSON Schema validators.

A CRD holds the OpenAPI v3 schema of its resource under
``spec.versions[*].schema.openAPIV3Schema``. The API server prunes fields the schema does not
name, silently; ``kubectl apply --validate=strict`` refuses them. The validators here are
strict too: every object schema that lists its properties, and does not ask to keep unknown
fields, gets ``additionalProperties: false``, so that a misspelt field fails the test instead of
vanishing in the cluster.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

CRDS = Path(__file__).parent / "crds"


def load_yaml(path: Path) -> list[dict[str, Any]]:
    with path.open() as stream:
        return [doc for doc in yaml.load_all(stream, Loader=yaml.CSafeLoader) if doc]


def strict(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` wherever properties are listed."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: strict(value) for key, value in schema.items()}
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["additionalProperties"] = False
    return result


@cache
def validators() -> dict[tuple[str, str], jsonschema.Draft7Validator]:
    """(apiVersion, kind) -> a strict validator of that resource."""
    found = {}
    for path in sorted(CRDS.glob("*.yaml")):
        (crd,) = load_yaml(path)
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schema = strict(version["schema"]["openAPIV3Schema"])
            found[(f"{group}/{version['name']}", kind)] = jsonschema.Draft7Validator(schema)
    return found


def problems(manifest: dict[str, Any]) -> list[str]:
    """What KServe's schema finds wrong in ``manifest`` (empty when it is accepted)."""
    validator = validators()[(manifest["apiVersion"], manifest["kind"])]
    return [
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(manifest)
    ]
