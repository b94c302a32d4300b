"""Demultiplexing and gathering tensors that hold no data ([2, 0], shards of [0]): each shard is
as empty as the whole, and gathering them gives back the shape, as for any other tensor."""

from __future__ import annotations

import numpy as np
import pytest

from ovmsx import _core
from ovmsx.pipeline.shards import split, stack


@pytest.mark.parametrize("shape", [(2, 0), (3, 0, 4), (1, 5, 0)])
def test_an_empty_tensor_splits_into_empty_shards_and_stacks_back(shape) -> None:
    tensor = _core.Tensor("t", np.zeros(shape, np.float32))
    shards = split(tensor, None, "node n")
    assert [list(s.shape) for s in shards] == [list(shape[1:])] * shape[0]
    assert all(memoryview(s).nbytes == 0 for s in shards)
    gathered = stack(shards, "node n")
    assert list(gathered.shape) == list(shape)
    assert gathered.datatype == "FP32"
    assert np.asarray(gathered).shape == shape
