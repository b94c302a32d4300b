"""The pydantic settings every config object uses: OVMS's schema is strict, and so is ovmsx."""

from pydantic import ConfigDict

STRICT = ConfigDict(
    frozen=True,
    extra="forbid",  # an unknown key is an error, as in OVMS's JSON schema
    strict=True,  # no quiet coercion: "1" is not a number
    use_attribute_docstrings=True,  # field docstrings become the schema's descriptions
    protected_namespaces=(),  # "model_*" keys are OVMS's, not pydantic's
)
