"""The table of malformed REST requests: each row gets its exact HTTP status and
``{"error": ...}`` message, and the same server then answers a good JSON request to the same
servable correctly."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from good_requests import TARGETS
from rest_process import RestProcess
from rest_requests import RestRow, check_still_serving, send_row
from rest_rows_json import JSON_ROWS
from rest_rows_protocol import PROTOCOL_ROWS

ROWS: list[RestRow] = [*JSON_ROWS, *PROTOCOL_ROWS]


def test_the_table_is_whole() -> None:
    ids = Counter(row.id for row in ROWS)
    assert [name for name, count in ids.items() if count > 1] == []
    assert len(ROWS) >= 35
    assert {row.target for row in ROWS} == set(TARGETS)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_malformed_rest_request(server: RestProcess, row: RestRow) -> None:
    reply = send_row(server.rest_port, row)
    assert reply.status == row.status, reply
    assert reply.headers["content-type"] == "application/json", reply.headers
    if isinstance(row.message, re.Pattern):
        assert row.message.fullmatch(reply.error), reply.error
    else:
        assert reply.error == row.message
    check_still_serving(server.rest_port, row.target)
