"""The single-model preprocessing flags --mean, --scale, --color_format and --precision.

They are built into the compiled model (OpenVINO's PrePostProcessor, csrc/core/model_source.*),
so a request costs nothing more than the model's own arithmetic. The model then takes what
the client sends and computes ``(convert(color(x)) - mean) / scale`` in front of its input, in
that order whatever the order of the flags.

Spellings are OVMS's: a value is a float, or one float per channel in ``[a,b,c]`` or
``(a,b,c)``; a pair is ``A:B``, case-insensitive. Which side is which differs between the two
pairs, as in OVMS: ``--color_format`` is ``MODEL:CLIENT`` (``BGR:NV12`` takes NV12 and gives
the model BGR) and ``--precision`` is ``CLIENT:MODEL`` (``uint8:fp32`` takes UINT8 and gives
the model FP32).
"""

from __future__ import annotations

from dataclasses import dataclass

from ovmsx.status import StatusCode, StatusError

Values = float | tuple[float, ...]

COLOR_FORMATS = ("RGB", "BGR", "GRAY", "NV12", "NV12_2", "I420", "I420_3")

# OVMS's precision names and the OpenVINO element types they mean.
ELEMENT_TYPES = {
    "BF16": "bf16",
    "FP64": "f64",
    "FP32": "f32",
    "FP16": "f16",
    "INT64": "i64",
    "INT32": "i32",
    "INT16": "i16",
    "INT8": "i8",
    "INT4": "i4",
    "UINT64": "u64",
    "UINT32": "u32",
    "UINT16": "u16",
    "UINT8": "u8",
    "UINT4": "u4",
    "UINT1": "u1",
}

FLAGS = ("mean", "scale", "color_format", "precision")


@dataclass(frozen=True)
class Preprocessing:
    """What the flags ask of the model's single input; ``None`` where a flag was not given."""

    mean: Values | None = None
    scale: Values | None = None
    color: tuple[str, str] | None = None
    """(client's, model's) color format, OVMS names."""
    element_types: tuple[str, str] | None = None
    """(client's, model's) element type, OpenVINO names (``u8``, ``f32``…)."""

    def step_arguments(self) -> dict[str, object]:
        """Keyword arguments of ``_core.ModelSource.prepare_inputs``."""
        return {
            "color": self.color,
            "element_types": self.element_types,
            "mean": _listed(self.mean),
            "scale": _listed(self.scale),
        }


def parse_preprocessing(
    mean: str | None = None,
    scale: str | None = None,
    color_format: str | None = None,
    precision: str | None = None,
) -> Preprocessing | None:
    """The flags as given (``None`` or ``""`` = not given); ``None`` when none is given.

    Raises ``StatusError`` with OVMS's code (FLOAT_WRONG_FORMAT, COLOR_FORMAT_WRONG_FORMAT,
    PRECISION_WRONG_FORMAT) naming the flag and the value.
    """
    found = Preprocessing(
        mean=parse_values("mean", mean),
        scale=parse_values("scale", scale),
        color=_color_pair(color_format),
        element_types=_precision_pair(precision),
    )
    return None if found == Preprocessing() else found


def parse_values(flag: str, text: str | None) -> Values | None:
    """``"2"`` → 2.0; ``"[1, 2,3]"`` or ``"(1,2,3)"`` → (1.0, 2.0, 3.0)."""
    if not text:
        return None
    compact = text.replace(" ", "")
    try:
        if compact[:1] + compact[-1:] in ("[]", "()"):
            values = tuple(float(item) for item in compact[1:-1].split(","))
        else:
            values = float(compact)
    except ValueError:
        raise StatusError(
            StatusCode.FLOAT_WRONG_FORMAT,
            f"--{flag} {text!r}: expected a float, or floats in [a,b,c] or (a,b,c)",
        ) from None
    return values


def _pair(text: str) -> tuple[str, str] | None:
    first, colon, second = text.upper().partition(":")
    return (first.strip(), second.strip()) if colon else None


def _color_pair(text: str | None) -> tuple[str, str] | None:
    if not text:
        return None
    pair = _pair(text)
    if pair is None or any(name not in COLOR_FORMATS for name in pair):
        raise StatusError(
            StatusCode.COLOR_FORMAT_WRONG_FORMAT,
            f"--color_format {text!r}: expected TARGET:SOURCE, each one of "
            + ", ".join(COLOR_FORMATS),
        )
    model, client = pair
    return client, model


def _precision_pair(text: str | None) -> tuple[str, str] | None:
    if not text:
        return None
    pair = _pair(text)
    if pair is None or any(name not in ELEMENT_TYPES for name in pair):
        raise StatusError(
            StatusCode.PRECISION_WRONG_FORMAT,
            f"--precision {text!r}: expected CLIENT:MODEL, each one of " + ", ".join(ELEMENT_TYPES),
        )
    client, model = pair
    return ELEMENT_TYPES[client], ELEMENT_TYPES[model]


def _listed(values: Values | None) -> float | list[float] | None:
    return list(values) if isinstance(values, tuple) else values
