"""Malformed REST requests in the JSON part: garbage JSON, fields of the wrong type, shapes,
datatypes and values. Each gets the exact HTTP status and ``{"error": ...}`` message."""

from __future__ import annotations

import json

from good_requests import TYPED
from grpc_requests import (
    DIMS_16,
)
from ovms_messages import (
    BATCH,
    CONTENT_SIZE,
    NO_OF_DIMS,
    PRECISION,
    SHAPE,
    UNEXPECTED,
    VALUE_COUNT,
)
from rest_requests import (
    JSON_INVALID,
    MESSAGE_STRUCTURE,
    NESTING,
    NO_INPUTS,
    NOT_AN_OBJECT,
    PARAMETERS,
    UNPARSABLE,
    UNPARSABLE_OUTPUT,
    UNSUPPORTED,
    RestRow,
    body,
    top,
)

DEEP = b'{"inputs": [{"name": "input", "shape": [1, 10], "datatype": "FP32", "data": '
DEEP += b"[" * 100_000 + b"]" * 100_000 + b"}]}"
# The 101st container: the body's object, "inputs", the input, then the 98th "[" of "data".
DEEP_AT = DEEP.index(b"[[") + 97
# Valid JSON 101 levels deep in a field nobody reads: refused all the same, as OVMS refuses it.
DEEP_IGNORED = b'{"extra": ' + b"[" * 100 + b"]" * 100 + b", " + body("add_one")[1:]
DEEP_IGNORED_AT = DEEP_IGNORED.index(b"[") + 99  # the body's object is the first level
TRUNCATED = body("add_one")[:-3]
NAN = body("add_one").replace(b"0.0", b"NaN")


def json_error(message: str, offset: int) -> str:
    """OVMS's JSON_INVALID: RapidJSON's message and the offset where its parser stood."""
    return f"{JSON_INVALID} - Error: {message} Offset: {offset}"


def too_deep(offset: int) -> str:
    return (
        f"{NESTING} - more than 100 levels of arrays and objects; the first one too deep opens "
        f"at offset {offset}"
    )


def _mixed() -> tuple[bytes, tuple[tuple[str, str], ...]]:
    """The typed request with its first input's data moved to the binary tail, the others'
    left in the JSON."""
    document = json.loads(body("typed"))
    first = document["inputs"][0]
    del first["data"]
    tail = TYPED[first["name"]].tobytes()
    first["parameters"] = {"binary_data_size": len(tail)}
    head = json.dumps(document).encode()
    return head + tail, (("Inference-Header-Content-Length", str(len(head))),)


MIXED_BODY, MIXED_HEADERS = _mixed()


JSON_ROWS: list[RestRow] = [
    # -- garbage JSON ---------------------------------------------------------------------
    RestRow(
        "not-json", "add_one", b"{not json", 412, json_error("Missing a name for object member.", 1)
    ),
    RestRow("empty-body", "add_one", b"", 412, json_error("The document is empty.", 0)),
    RestRow("blank-body", "add_one", b" \r\n", 412, json_error("The document is empty.", 3)),
    RestRow(
        "body-truncated",
        "add_one",
        TRUNCATED,
        412,
        json_error("Missing a comma or '}' after an object member.", len(TRUNCATED)),
    ),
    RestRow(
        "body-not-utf8",
        "add_one",
        b'{"id": "\xff"}',
        412,
        json_error("Invalid encoding in string.", 8),
    ),
    RestRow(
        "json-literal-misspelt",
        "add_one",
        b'{"inputs": tru}',
        412,
        json_error("Invalid value.", 14),
    ),
    RestRow(
        "json-object-comma-missing",
        "add_one",
        b'{"id": "a" "inputs": []}',
        412,
        json_error("Missing a comma or '}' after an object member.", 11),
    ),
    RestRow(
        "json-array-comma-missing",
        "add_one",
        b'{"inputs": [{} {}]}',
        412,
        json_error("Missing a comma or ']' after an array element.", 15),
    ),
    RestRow(
        "json-array-trailing-comma",
        "add_one",
        b'{"inputs": [{},]}',
        412,
        json_error("Invalid value.", 15),
    ),
    RestRow(
        "json-name-missing",
        "add_one",
        b'{"id": "a", }',
        412,
        json_error("Missing a name for object member.", 12),
    ),
    RestRow(
        "json-colon-missing",
        "add_one",
        b'{"inputs" []}',
        412,
        json_error("Missing a colon after a name of object member.", 10),
    ),
    RestRow(
        "json-escape-invalid",
        "add_one",
        b'{"id": "a\\q"}',
        412,
        json_error("Invalid escape character in string.", 9),
    ),
    RestRow(
        "json-unicode-escape-invalid",
        "add_one",
        b'{"id": "\\u12G4"}',
        412,
        json_error("Incorrect hex digit after \\u escape in string.", 8),
    ),
    RestRow(
        "json-surrogate-alone",
        "add_one",
        b'{"id": "\\ud800x"}',
        412,
        json_error("The surrogate pair in string is invalid.", 8),
    ),
    RestRow(
        "json-control-character-in-string",
        "add_one",
        b'{"id": "a\tb"}',
        412,
        json_error("Invalid encoding in string.", 9),
    ),
    RestRow(
        "json-string-unterminated",
        "add_one",
        b'{"id": "abc',
        412,
        json_error("Missing a closing quotation mark in string.", 11),
    ),
    RestRow(
        "json-root-not-singular",
        "add_one",
        body("add_one") + b" {}",
        412,
        json_error(
            "The document root must not be followed by other values.", len(body("add_one")) + 1
        ),
    ),
    RestRow(
        "json-fraction-missing",
        "add_one",
        b'{"id": 1.}',
        412,
        json_error("Miss fraction part in number.", 9),
    ),
    RestRow("body-array", "add_one", b"[]", 400, NOT_AN_OBJECT),
    RestRow("body-string", "add_one", b'"inputs"', 400, NOT_AN_OBJECT),
    RestRow("inputs-missing", "add_one", b"{}", 400, NO_INPUTS),
    RestRow(
        "inputs-not-list",
        "add_one",
        top("add_one", inputs={"name": "input"}),
        400,
        f"{UNPARSABLE} - inputs must be an array",
    ),
    RestRow(
        "input-not-object",
        "add_one",
        top("add_one", inputs=[1]),
        400,
        f"{UNPARSABLE} - each input must be an object",
    ),
    RestRow(
        "input-name-missing",
        "add_one",
        body("add_one", name=...),
        400,
        f"{UNPARSABLE} - an input has no name",
    ),
    RestRow(
        "input-name-number",
        "add_one",
        body("add_one", name=7),
        400,
        f"{UNPARSABLE} - an input has no name",
    ),
    RestRow(
        "data-not-list",
        "add_one",
        body("add_one", data=5),
        400,
        f"{UNPARSABLE} - data must be an array; input name: input",
    ),
    RestRow(
        "data-string",
        "add_one",
        body("add_one", data="0123456789"),
        400,
        f"{UNPARSABLE} - data must be an array; input name: input",
    ),
    RestRow(
        "data-ragged",
        "add_one",
        body("add_one", data=[[1, 2], [3]]),
        400,
        f"{VALUE_COUNT} - Expected: 10 values; Actual: 3 values; input name: input",
    ),
    RestRow(
        "data-strings-for-numbers",
        "add_one",
        body("add_one", data=["1"] * 10),
        400,
        f"{UNPARSABLE} - FP32 data must be numbers; input name: input",
    ),
    RestRow(
        "data-objects",
        "add_one",
        body("add_one", data=[{}] * 10),
        400,
        f"{UNPARSABLE} - FP32 data must be numbers; input name: input",
    ),
    RestRow("data-nan", "add_one", NAN, 412, json_error("Invalid value.", NAN.index(b"NaN"))),
    RestRow(
        "data-infinity",
        "add_one",
        body("add_one").replace(b"0.0", b"-Infinity"),
        412,
        json_error("Invalid value.", NAN.index(b"NaN") + 1),
    ),
    RestRow("data-deep-nesting", "add_one", DEEP, 500, too_deep(DEEP_AT)),
    RestRow("ignored-field-101-deep", "add_one", DEEP_IGNORED, 500, too_deep(DEEP_IGNORED_AT)),
    RestRow(
        "inputs-json-and-binary",
        "typed",
        MIXED_BODY,
        400,
        f"{MESSAGE_STRUCTURE} - input int8 is binary data, input int16 is JSON data",
        headers=MIXED_HEADERS,
    ),
    RestRow(
        "id-number", "add_one", top("add_one", id=7), 400, f"{UNPARSABLE} - id must be a string"
    ),
    RestRow(
        "parameters-not-object",
        "add_one",
        top("add_one", parameters=[1]),
        400,
        f"{PARAMETERS} - request parameters must be an object",
    ),
    RestRow(
        "parameter-float",
        "add_one",
        top("add_one", parameters={"p": 1.5}),
        400,
        f"{PARAMETERS} - request parameter p must be a string, a boolean or a 64-bit integer",
    ),
    RestRow(
        "parameter-object",
        "echo",
        top("echo", parameters={"p": {"q": 1}}),
        400,
        f"{PARAMETERS} - request parameter p must be a string, a boolean or a 64-bit integer",
    ),
    RestRow(
        "parameter-above-int64",
        "echo",
        top("echo", parameters={"p": 2**63}),
        400,
        f"{PARAMETERS} - request parameter p must be a string, a boolean or a 64-bit integer",
    ),
    RestRow(
        "outputs-not-list",
        "add_one",
        top("add_one", outputs={"name": "output"}),
        400,
        f"{UNPARSABLE_OUTPUT} - outputs must be an array",
    ),
    RestRow(
        "output-without-name",
        "add_one",
        top("add_one", outputs=[{}]),
        400,
        f"{UNPARSABLE_OUTPUT} - each output must be an object with a name",
    ),
    RestRow(
        "output-unknown",
        "add_one",
        top("add_one", outputs=[{"name": "nope"}]),
        400,
        "Missing output with specific name - Required output: nope",
    ),
    # -- shapes ---------------------------------------------------------------------------
    RestRow(
        "shape-missing",
        "add_one",
        body("add_one", shape=...),
        400,
        f"{UNPARSABLE} - shape must be an array of non-negative integers; input name: input",
    ),
    RestRow(
        "shape-not-list",
        "add_one",
        body("add_one", shape="1,10"),
        400,
        f"{UNPARSABLE} - shape must be an array of non-negative integers; input name: input",
    ),
    RestRow(
        "shape-strings",
        "add_one",
        body("add_one", shape=["1", "10"]),
        400,
        f"{UNPARSABLE} - shape must be an array of non-negative integers; input name: input",
    ),
    RestRow(
        "shape-negative",
        "add_one",
        body("add_one", shape=[-1, 10]),
        400,
        f"{UNPARSABLE} - shape must be an array of non-negative integers; input name: input",
    ),
    RestRow(
        "shape-float",
        "add_one",
        body("add_one", shape=[1.0, 10]),
        400,
        f"{UNPARSABLE} - shape must be an array of non-negative integers; input name: input",
    ),
    RestRow(
        "shape-2^63",
        "identity",
        body("identity", shape=[2**63, 1]),
        400,
        f"{UNPARSABLE} - shape must be an array of non-negative integers; input name: input",
    ),
    RestRow(
        "shape-rank-wrong",
        "add_one",
        body("add_one", shape=[10]),
        400,
        f"{NO_OF_DIMS} - Expected: (1,10); Actual: (10); input name: input",
    ),
    RestRow(
        "shape-dim-wrong",
        "add_one",
        body("add_one", shape=[1, 9]),
        400,
        f"{SHAPE} - Expected: (1,10); Actual: (1,9); input name: input",
    ),
    RestRow(
        "shape-product-overflow",
        "identity",
        body("identity", shape=[2**40, 2**40]),
        400,
        f"{CONTENT_SIZE} - Shape dimensions overflow; input name: input",
    ),
    RestRow(
        "shape-rank-10000",
        "identity",
        body("identity", shape=[1] * 10_000),
        400,
        f"{NO_OF_DIMS} - Expected: (-1,-1); Actual: ({DIMS_16},...) (rank 10000); input name: "
        "input",
    ),
    RestRow(
        "pipeline-shape-wrong",
        "add_two",
        body("add_two", shape=[2, 5]),
        400,
        f"{BATCH} - Expected: 1; Actual: 2; input name: input",
    ),
    # -- datatypes and values -------------------------------------------------------------
    RestRow(
        "datatype-missing",
        "add_one",
        body("add_one", datatype=...),
        400,
        f"{UNPARSABLE} - datatype must be a string; input name: input",
    ),
    RestRow(
        "datatype-number",
        "add_one",
        body("add_one", datatype=32),
        400,
        f"{UNPARSABLE} - datatype must be a string; input name: input",
    ),
    RestRow(
        "datatype-unknown",
        "add_one",
        body("add_one", datatype="FP33"),
        400,
        f"{UNSUPPORTED} - datatype FP33 cannot be given as JSON data; input name: input",
    ),
    RestRow(
        "datatype-lower-case",
        "add_one",
        body("add_one", datatype="fp32"),
        400,
        f"{UNSUPPORTED} - datatype fp32 cannot be given as JSON data; input name: input",
    ),
    RestRow(
        "datatype-empty",
        "add_one",
        body("add_one", datatype=""),
        400,
        f"{UNSUPPORTED} - datatype  cannot be given as JSON data; input name: input",
    ),
    RestRow(
        "datatype-mismatched",
        "add_one",
        body("add_one", datatype="INT32", data=list(range(10))),
        400,
        f"{PRECISION} - Expected: FP32; Actual: INT32; input name: input",
    ),
    RestRow(
        "values-too-few",
        "add_one",
        body("add_one", data=[1.0] * 9),
        400,
        f"{VALUE_COUNT} - Expected: 10 values; Actual: 9 values; input name: input",
    ),
    RestRow(
        "value-does-not-fit",
        "typed",
        body("typed", data=[300, 1]),
        400,
        f"{UNPARSABLE} - a value does not fit INT8; input name: int8",
    ),
    RestRow(
        "value-float-for-int",
        "typed",
        body("typed", data=[1.5, 1]),
        400,
        f"{UNPARSABLE} - INT8 data must be integers; input name: int8",
    ),
    RestRow(
        "strings-as-numbers",
        "strings",
        body("strings", data=[1, 2, 3]),
        400,
        f"{UNPARSABLE} - BYTES data must be strings; input name: text",
    ),
    RestRow(
        "graph-values-too-few",
        "echo",
        body("echo", data=[1.0] * 3),
        400,
        f"{VALUE_COUNT} - Expected: 10 values; Actual: 3 values; input name: in",
    ),
    RestRow(
        "graph-input-unknown",
        "echo",
        body("echo", name="x"),
        400,
        f"{UNEXPECTED} - x is unexpected",
    ),
]
