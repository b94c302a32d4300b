"""Bytes per element of a KServe datatype, for checks made outside the C++ core."""

from __future__ import annotations

from ovmsx import _core

# BF16 is a KServe datatype that pyovms's buffer-format table (COMPAT §2.1), and so the core's
# ``datatype_itemsize``, leaves out; an OpenVINO bf16 element takes two bytes.
_OUTSIDE_THE_TABLE = {"BF16": 2}


def element_size(datatype: str) -> int | None:
    """Bytes per element, or None for BYTES and datatypes KServe does not define."""
    return _core.datatype_itemsize(datatype) or _OUTSIDE_THE_TABLE.get(datatype)
