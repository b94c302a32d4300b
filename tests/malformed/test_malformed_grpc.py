"""The table of malformed gRPC requests: each row gets its exact code and message, and the
same server then answers a good request to the same servable correctly."""

from __future__ import annotations

import re
from collections import Counter

import grpc
import pytest
from good_requests import TARGETS
from grpc_requests import GrpcRow
from grpc_rows_requests import REQUEST_ROWS
from grpc_rows_tensors import TENSOR_ROWS
from grpc_rows_wire import WIRE_ROWS
from grpc_table import check_still_serving, send_row

ROWS: list[GrpcRow] = [*TENSOR_ROWS, *REQUEST_ROWS, *WIRE_ROWS]


def test_the_table_is_whole() -> None:
    ids = Counter(row.id for row in ROWS)
    assert [name for name, count in ids.items() if count > 1] == []
    assert len(ROWS) >= 70
    assert {row.target for row in ROWS} == set(TARGETS)
    assert sum(isinstance(row.body, list) for row in ROWS) >= 5  # streams


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_malformed_grpc_request(channel: grpc.Channel, row: GrpcRow) -> None:
    outcome = send_row(channel, row)
    assert outcome.code == row.code, outcome
    if isinstance(row.message, re.Pattern):
        assert row.message.fullmatch(outcome.message), outcome.message
    else:
        assert outcome.message == row.message
    assert outcome.request_id == row.request_id
    check_still_serving(channel, row.target)
