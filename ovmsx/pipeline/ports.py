"""What a node input or output carries: a datatype and dims, as the validator and metadata see it.

``PortSpec`` has the attributes of ``_core.PortInfo`` that request validation reads, so a
pipeline's inputs are checked by the same ``InputValidator`` as a model's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ovmsx import _core

ANY = (0, -1)  # a dimension of any size


@dataclass(frozen=True)
class PortSpec:
    name: str
    datatype: str  # "" when the node does not say
    dims: tuple[tuple[int, int], ...]
    rank_dynamic: bool = False
    layout: str = ""
    demultiplexed: bool = False  # the first dim was added by a demultiplexer (OVMS's flag)

    def renamed(self, name: str) -> PortSpec:
        return replace(self, name=name)

    def without_first_dim(self) -> PortSpec:
        """A shard's port: what a demultiplexer's output holds per shard."""
        if self.rank_dynamic:
            return self
        return PortSpec(self.name, self.datatype, self.dims[1:], False, "")

    def with_first_dim(self, size: int = -1) -> PortSpec:
        """A gathered port: the shards stacked along a new first dimension, ``size`` long
        (-1: any; a static ``demultiply_count`` makes it known, as in OVMS's metadata)."""
        if self.rank_dynamic:
            return self
        first = ANY if size < 1 else (size, size)
        layout = _demultiplexed_layout(self.layout)
        return PortSpec(self.name, self.datatype, (first, *self.dims), False, layout, True)

    def shape(self) -> list[int]:
        """KServe metadata shape: -1 for any dimension that is not one fixed size."""
        return [low if low == high else -1 for low, high in self.dims]

    def fits(self, other: PortSpec) -> bool:
        """Whether data described by ``self`` can feed an input described by ``other``."""
        if self.datatype and other.datatype and self.datatype != other.datatype:
            return False
        if self.rank_dynamic or other.rank_dynamic:
            return True
        if len(self.dims) != len(other.dims):
            return False
        return all(_overlap(a, b) for a, b in zip(self.dims, other.dims, strict=True))


def intersect(a: PortSpec, b: PortSpec) -> PortSpec | None:
    """What satisfies both ports (same datatype, dims in both ranges), or None if nothing."""
    if a.datatype and b.datatype and a.datatype != b.datatype:
        return None
    datatype = a.datatype or b.datatype
    if a.rank_dynamic or b.rank_dynamic:
        fixed = b if a.rank_dynamic else a
        return replace(fixed, name=a.name, datatype=datatype)
    if len(a.dims) != len(b.dims) or not a.fits(b):
        return None
    dims = []
    for (low_a, high_a), (low_b, high_b) in zip(a.dims, b.dims, strict=True):
        highs = [h for h in (high_a, high_b) if h != -1]
        dims.append((max(low_a, low_b), min(highs) if highs else -1))
    demultiplexed = a.demultiplexed or b.demultiplexed
    return PortSpec(a.name, datatype, tuple(dims), False, a.layout or b.layout, demultiplexed)


def _demultiplexed_layout(layout: str) -> str:
    """OVMS's layout for a dimension added in front by a demultiplexer: the batch letter
    moves to it (``[N,H,W,C]`` -> ``[N,?,H,W,C]``; no layout, OVMS's ``N...``, -> ``[N,?,...]``),
    written the way OpenVINO writes layouts."""
    axes = layout.strip("[]").split(",") if layout else ["N", "..."]
    return "[" + ",".join(["N", *("?" if axis == "N" else axis for axis in axes)]) + "]"


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    low = max(a[0], b[0])
    highs = [h for h in (a[1], b[1]) if h != -1]
    return not highs or low <= min(highs)


def from_port_info(port: _core.PortInfo) -> PortSpec:
    return PortSpec(port.name, port.datatype, tuple(port.dims), port.rank_dynamic, port.layout)


def from_tensor_info(info: _core.TensorInfo) -> PortSpec:
    dims = tuple(ANY if d < 0 else (d, d) for d in info.shape)
    return PortSpec(info.name, info.datatype, dims)
