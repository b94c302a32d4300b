"""Demultiplexing and gathering: split a tensor along its first dimension, stack shards back.

Shards are zero-copy views of the tensor they come from; stacking copies once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ovmsx import _core
from ovmsx.config.pipeline_config import DEMULTIPLY_LIMIT
from ovmsx.status import StatusCode, status_error
from ovmsx.tensor_bytes import raw_bytes


def renamed(tensor: _core.Tensor, name: str) -> _core.Tensor:
    """The same data under another name (a view)."""
    if tensor.name == name:
        return tensor
    return _core.Tensor._from_raw(name, tensor, list(tensor.shape), tensor.datatype)


def split(tensor: _core.Tensor, count: int | None, where: str) -> list[_core.Tensor]:
    """Shards along the first dimension; ``count`` (None or -1: any) must match it."""
    shape = tensor.shape
    if len(shape) < 2:
        raise status_error(
            StatusCode.PIPELINE_WRONG_NUMBER_OF_DIMENSIONS_TO_DEMULTIPLY,
            f"{where}: shape {list(shape)} has no dimension left after the first",
        )
    if tensor.datatype == "BYTES":
        raise status_error(
            StatusCode.PIPELINE_WRONG_NUMBER_OF_DIMENSIONS_TO_DEMULTIPLY,
            f"{where}: string tensors cannot be demultiplied",
        )
    shards = shape[0]
    if count not in (None, -1) and shards != count:
        raise status_error(
            StatusCode.PIPELINE_WRONG_DIMENSION_SIZE_TO_DEMULTIPLY,
            f"{where}: Expected: {count}; Actual: {shards}",
        )
    if shards > DEMULTIPLY_LIMIT:
        raise status_error(
            StatusCode.PIPELINE_TOO_LARGE_DIMENSION_SIZE_TO_DEMULTIPLY,
            f"{where}: {shards} shards; the limit is {DEMULTIPLY_LIMIT}",
        )
    if shards == 0:
        raise status_error(StatusCode.PIPELINE_DEMULTIPLEXER_NO_RESULTS, where)
    raw = raw_bytes(tensor)
    step = len(raw) // shards
    rest = list(shape[1:])
    return [
        _core.Tensor._from_raw(tensor.name, raw[i * step : (i + 1) * step], rest, tensor.datatype)
        for i in range(shards)
    ]


def stack(shards: Sequence[_core.Tensor], where: str) -> _core.Tensor:
    """The shards, in order, along a new first dimension."""
    first = shards[0]
    for shard in shards[1:]:
        if shard.shape != first.shape or shard.datatype != first.datatype:
            raise status_error(
                StatusCode.PIPELINE_INCONSISTENT_SHARD_DIMENSIONS,
                f"{where}: {list(first.shape)} {first.datatype} vs "
                f"{list(shard.shape)} {shard.datatype}",
            )
    data = np.concatenate([np.frombuffer(raw_bytes(s), np.uint8) for s in shards])
    return _core.Tensor._from_raw(first.name, data, [len(shards), *first.shape], first.datatype)
