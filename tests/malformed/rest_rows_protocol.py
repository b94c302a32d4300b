"""Malformed REST requests around the JSON: the binary-data extension's parameters and
header, names nobody serves, routes, and oversized headers. Each gets the exact HTTP status
and ``{"error": ...}`` message."""

from __future__ import annotations

import re

from good_requests import X, pack_strings
from ovms_messages import (
    CONTENT_SIZE,
    INPUT_FORMAT,
    NAME_MISSING,
    VALUE_COUNT,
    VERSION_MISSING,
)
from rest_requests import (
    BOTH_CONTENTS,
    BUFFER_EXCEEDED,
    HEADER_EXCEEDED,
    HEADER_INVALID,
    INVALID_URL,
    PARAMETERS,
    SIZE_INVALID,
    UNSUPPORTED_METHOD,
    RestRow,
    body,
    infer_path,
)

LENGTH = "Inference-Header-Content-Length"


def _binary(target: str, tail: bytes, header: str | None = None, **changes) -> tuple:
    """(body, headers): the first input's data as a binary tail after the JSON part."""
    changes.setdefault("data", ...)
    head = body(target, **changes)
    return head + tail, ((LENGTH, str(len(head)) if header is None else header),)


def _binary_row(row_id: str, target: str, tail: bytes, status: int, message, **changes):
    header = changes.pop("header", None)
    data, headers = _binary(target, tail, header, **changes)
    return RestRow(row_id, target, data, status, message, headers=headers)


PROTOCOL_ROWS: list[RestRow] = [
    # -- binary data extension ------------------------------------------------------------
    _binary_row(
        "binary-size-on-json-input",
        "add_one",
        X.tobytes(),
        500,
        f"{BOTH_CONTENTS} - input input",
        data=X.reshape(-1).tolist(),
        parameters={"binary_data_size": 40},
    ),
    _binary_row(
        "binary-size-negative",
        "add_one",
        X.tobytes(),
        400,
        f"{SIZE_INVALID} - input input: -1",
        parameters={"binary_data_size": -1},
    ),
    _binary_row(
        "binary-size-string",
        "add_one",
        X.tobytes(),
        400,
        f"{SIZE_INVALID} - input input: '40'",
        parameters={"binary_data_size": "40"},
    ),
    _binary_row(
        "binary-size-huge",
        "add_one",
        X.tobytes(),
        400,
        f"{BUFFER_EXCEEDED} - input input needs 4611686018427387904 bytes from byte 0 of 40 "
        "binary bytes",
        parameters={"binary_data_size": 2**62},
    ),
    _binary_row(
        "binary-size-above-int64",
        "add_one",
        X.tobytes(),
        400,
        f"{PARAMETERS} - input input parameter binary_data_size must be a string, a boolean or a "
        "64-bit integer",
        parameters={"binary_data_size": 2**64},
    ),
    _binary_row(
        "binary-tail-short",
        "add_one",
        X.tobytes()[:36],
        400,
        f"{BUFFER_EXCEEDED} - input input needs 40 bytes from byte 0 of 36 binary bytes",
    ),
    _binary_row(
        "binary-tail-long",
        "add_one",
        X.tobytes() + bytes(4),
        400,
        f"{CONTENT_SIZE} - Expected: 40 bytes; Actual: 44 bytes; input name: input",
        parameters={"binary_data_size": 44},
    ),
    _binary_row(
        "binary-header-negative", "add_one", X.tobytes(), 500, f"{HEADER_INVALID} - -1", header="-1"
    ),
    _binary_row(
        "binary-header-not-a-number",
        "add_one",
        X.tobytes(),
        500,
        f"{HEADER_INVALID} - forty",
        header="forty",
    ),
    _binary_row(
        "binary-header-past-the-body",
        "add_one",
        X.tobytes(),
        500,
        f"{HEADER_EXCEEDED} - header says 100000 bytes, the body has 109",
        header="100000",
    ),
    _binary_row("binary-header-empty", "add_one", X.tobytes(), 500, HEADER_INVALID, header=""),
    _binary_row(
        "binary-bytes-prefix-past-the-end",
        "strings",
        b"\x09\x00\x00\x00ab",
        400,
        f"{INPUT_FORMAT} - BYTES element 0 at byte offset 0: declares 9 bytes but only 2 follow",
        shape=[1],
    ),
    _binary_row(
        "binary-bytes-count-wrong",
        "strings",
        pack_strings([b"a", b"b"]),
        400,
        f"{VALUE_COUNT} - BYTES buffer of 10 bytes holds 2 elements; the shape needs 1",
        shape=[1],
    ),
    # -- names and routes -----------------------------------------------------------------
    RestRow(
        "model-unknown",
        "add_one",
        body("add_one"),
        404,
        f"{NAME_MISSING} - name: no_such_model",
        path=infer_path("no_such_model"),
    ),
    RestRow(
        "version-unknown",
        "add_one",
        body("add_one"),
        404,
        f"{VERSION_MISSING} - model add_one version 3",
        path=infer_path("add_one", "3"),
    ),
    RestRow(
        "version-above-int64",
        "add_one",
        body("add_one"),
        404,
        f"{VERSION_MISSING} - version 99999999999999999999",
        path=infer_path("add_one", "9" * 20),
    ),
    RestRow(
        "version-not-a-number",
        "add_one",
        body("add_one"),
        400,
        INVALID_URL,
        path=infer_path("add_one", "one"),
    ),
    RestRow(
        "pipeline-version-unknown",
        "add_two",
        body("add_two"),
        404,
        f"{VERSION_MISSING} - add_two: pipelines have version 1",
        path=infer_path("add_two", "2"),
    ),
    RestRow(
        "method-put", "add_one", body("add_one"), 406, f"{UNSUPPORTED_METHOD} - PUT", method="PUT"
    ),
    RestRow(
        "method-get-on-infer",
        "add_one",
        b"",
        406,
        f"{UNSUPPORTED_METHOD} - GET /v2/models/add_one/infer",
        method="GET",
    ),
    # -- oversized headers ----------------------------------------------------------------
    RestRow(
        "header-line-1-mib",
        "add_one",
        body("add_one"),
        431,
        re.compile(r"Request header section larger than (?P<limit>\d+) bytes"),
        headers=(("X-Big", "v" * (1 << 20)),),
        oversized_head=True,
    ),
    RestRow(
        "headers-40000",
        "add_one",
        body("add_one"),
        431,
        re.compile(r"Request header section larger than (?P<limit>\d+) bytes"),
        headers=tuple((f"X-{i}", "v") for i in range(40_000)),
        oversized_head=True,
    ),
]
