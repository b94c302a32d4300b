"""Which inputs take encoded images, and what their shape and layout allow.

OVMS decides from the endpoint alone (its TensorInfo "processing hint"): a BYTES request input
is a batch of encoded images when the endpoint is 4-D, or 5-D when a demultiplexer at the
pipeline's entry added a dimension. A STRING endpoint, a 2-D UINT8 one (not demultiplexed) and a
1-D dynamic UINT8 one take strings instead; BYTES for any other endpoint is not implemented.

Layouts are compared OVMS's way (``Layout::createIntersection``): letters ``NCHWD``, ``?`` for
an unnamed dimension, ``...`` for any number of them; an input without a layout has OVMS's
default ``N...``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ovmsx.servables.port_layout import batch_index

DEFAULT_LAYOUT = "N..."  # OVMS's layout for an input that declares none
UNSPECIFIED_LAYOUT = "..."
IMAGE_LAYOUT = "N...HWC"  # what an image endpoint's layout must agree with
# The only layouts whose images OVMS resizes: any other one (the default N... included) takes
# images of the endpoint's own size only.
RESIZABLE_LAYOUTS = frozenset({"NHWC", "N?HWC", UNSPECIFIED_LAYOUT})
_ETC = "..."


class Port(Protocol):
    """What the endpoint rules read of a model input or a pipeline input."""

    name: str
    datatype: str
    rank_dynamic: bool
    layout: str

    @property
    def dims(self) -> list[tuple[int, int]] | tuple[tuple[int, int], ...]: ...


def layout_letters(layout: str) -> str:
    """OVMS's layout string for an OpenVINO one: ``[N,H,W,C]`` -> ``NHWC``; none -> ``N...``."""
    if not layout:
        return DEFAULT_LAYOUT
    return "".join(layout.strip("[]").split(","))


def _expanded(layout: str, rank: int) -> list[str] | None:
    """The layout with ``...`` spelled out as ``?`` for ``rank`` dimensions; None if it
    cannot have that many."""
    if _ETC in layout:
        known = len(layout) - len(_ETC)
        if known > rank:
            return None
        layout = layout.replace(_ETC, "?" * (rank - known), 1)
    return list(layout) if len(layout) == rank else None


def layouts_intersect(endpoint: str, wanted: str, rank: int) -> bool:
    """Whether some layout of ``rank`` dimensions satisfies both (OVMS's intersection: equal
    letters, or ``?`` on one side, and no letter used twice)."""
    left, right = _expanded(endpoint, rank), _expanded(wanted, rank)
    if left is None or right is None:
        return False
    for index, (mine, theirs) in enumerate(zip(left, right, strict=True)):
        if mine == theirs or theirs == "?":
            continue
        if theirs in left or mine != "?":
            return False
        left[index] = theirs
    return True


def is_any(bounds: tuple[int, int]) -> bool:
    """A dimension of no upper bound (``-1``, or OpenVINO's ``?``)."""
    return bounds[1] == -1


@dataclass(frozen=True)
class ImageEndpoint:
    """An input that takes encoded images, with what OVMS's rules make of its shape."""

    name: str
    datatype: str
    dims: tuple[tuple[int, int], ...]  # 4 (N,H,W,C) or, demultiplexed, 5 (N,1,H,W,C)
    layout: str  # OVMS letters, e.g. "NHWC", "N?HWC", "N..."
    batch: int | None  # index of the batch dimension, None when the layout has none
    demultiplexed: bool
    accepts_layout: bool  # the layout agrees with N...HWC
    resizable: bool  # images of another size are resized (else refused)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def height(self) -> tuple[int, int]:
        return self.dims[-3]

    @property
    def width(self) -> tuple[int, int]:
        return self.dims[-2]

    @property
    def channels(self) -> tuple[int, int]:
        return self.dims[-1]


def takes_strings(port: Port) -> bool:
    """Whether BYTES data for this input are strings (a STRING input, OVMS's 2-D UINT8 form,
    or its 1-D dynamic UINT8 form), not images."""
    if port.datatype == "BYTES":
        return True
    if port.rank_dynamic or port.datatype != "UINT8" or getattr(port, "demultiplexed", False):
        return False
    dims = list(port.dims)
    return len(dims) == 2 or (len(dims) == 1 and dims[0][0] != dims[0][1])


def image_endpoint(port: Port) -> ImageEndpoint | None:
    """The image rules of ``port``, or None when BYTES data for it are no images."""
    if port.rank_dynamic or takes_strings(port):
        return None
    demultiplexed = bool(getattr(port, "demultiplexed", False))
    dims = tuple(port.dims)
    if len(dims) != (5 if demultiplexed else 4):
        return None
    letters = layout_letters(port.layout)
    resizable = letters in RESIZABLE_LAYOUTS and not any(is_any(d) for d in dims)
    return ImageEndpoint(
        name=port.name,
        datatype=port.datatype,
        dims=dims,
        layout=letters,
        batch=batch_index(port),  # type: ignore[arg-type]  # reads name-free attributes only
        demultiplexed=demultiplexed,
        accepts_layout=layouts_intersect(letters, IMAGE_LAYOUT, len(dims)),
        resizable=resizable,
    )
